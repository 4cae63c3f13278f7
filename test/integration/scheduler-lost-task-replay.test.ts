import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tsEntry } from '../../src/infra/ts-entry';
import { driveScheduler, PROBE_SCHEDULER_INPUT } from '../support/nde/lost-task-load';

/**
 * The scheduler's history replays after its worker fell behind. Its only worker (its own process,
 * test/support/nde/probe-worker.ts) is stopped now and then (SIGSTOP, 1 to 3.5 s, past the 2-s
 * workflow task timeout) while submit, topUp and workerReport updates, report signals and status
 * queries stream in. SDK 1.24.0 sends the commands of an activation whose workflow task did not
 * complete with the next task that does, ahead of that task's update acceptances; a replay applies
 * the events of both tasks in one activation, updates first, and fails: "Update machine does not
 * handle this event: ActivityTaskScheduled". The scheduler starts no commands in an activation a
 * query task applied (src/workflows/scheduler-task-watch.ts); an activation of a task that then
 * timed out looks like any other to workflow code. Opt-in (SCHEDULER_LOST_TASK=1,
 * test/support/opt-in.mts) while a round still fails so (1 of 24 measured);
 * SCHEDULER_LOST_TASK_ROUNDS sets the rounds (about 80 s each), MAX_CACHED_WORKFLOWS the probe
 * worker's cache.
 */
const ENABLED = process.env.SCHEDULER_LOST_TASK === '1';
const ROUNDS = Number(process.env.SCHEDULER_LOST_TASK_ROUNDS ?? 4);
const LOAD_MS = 20_000;

describe('the scheduler replays after queries met its pending workflow tasks (real dev server, paused worker)', () => {
  let child: ChildProcess | undefined;
  let client: Client;
  let connection: Connection;
  const taskQueue = `nde-${Date.now()}`;
  const logFile = path.join(os.tmpdir(), `${taskQueue}-worker.log`);

  beforeAll(async () => {
    if (!ENABLED) return;
    const { command, args } = tsEntry(path.join(__dirname, '..', 'support', 'nde', 'probe-worker.ts'));
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TASK_QUEUE: taskQueue,
    };
    child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const log = createWriteStream(logFile);
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child!.once('exit', (code) => reject(new Error(`probe worker exited (${code}); see ${logFile}`)));
    });
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection });
  }, 120_000);

  afterAll(async () => {
    if (child?.pid && child.exitCode === null) {
      process.kill(-child.pid, 'SIGCONT');
      process.kill(-child.pid, 'SIGKILL');
    }
    await connection?.close();
  });

  it.runIf(ENABLED)(
    `replays every round's history (${ROUNDS} rounds of ${LOAD_MS / 1000} s)`,
    async () => {
      const failures: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const workflowId = `${taskQueue}-scheduler-${round}`;
        const h = await client.workflow.start('schedulerWorkflow', {
          taskQueue,
          workflowId,
          workflowTaskTimeout: '2s',
          args: [PROBE_SCHEDULER_INPUT],
        });
        const { outstanding } = await driveScheduler(h, LOAD_MS, (ms) => {
          process.kill(-child!.pid!, 'SIGSTOP');
          setTimeout(() => process.kill(-child!.pid!, 'SIGCONT'), ms);
        });
        const history = await h.fetchHistory();
        await h.terminate().catch(() => undefined);
        await outstanding;
        try {
          await Worker.runReplayHistory(
            { workflowBundle: { codePath: inject('workflowBundlePath') }, replayName: workflowId },
            history,
            workflowId,
          );
        } catch (err) {
          const file = path.join(os.tmpdir(), `${workflowId}.pb`);
          writeFileSync(file, temporal.api.history.v1.History.encode(history).finish());
          failures.push(
            `round ${round}: ${String(err).slice(0, 300)} (history ${file}, worker log ${logFile})`,
          );
        }
      }
      expect(failures).toEqual([]);
    },
    ROUNDS * (LOAD_MS + 130_000),
  );
});

import type { Client } from '@temporalio/client';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config';
import { startSchedulerWatchdog } from '../../../src/fleet/scheduler-watchdog';

/** A Temporal client whose scheduler is terminated until started, and whose one queued run counts nudges. */
function fakeClient() {
  const seen = { starts: 0, recovers: 0, nudges: 0 };
  let runId: string | null = null;
  const scheduler = {
    describe: async () => ({
      runId: runId ?? 'old',
      status: { name: runId === null ? 'TERMINATED' : 'RUNNING' },
      raw: { workflowExecutionInfo: { firstRunId: runId ?? 'old' } },
    }),
    query: async () => ({ counters: {}, history: { continuedAsNew: 0 } }),
    signal: async () => void seen.recovers++,
  };
  const startTime = new Date();
  const run = {
    describe: async () => ({ status: { name: 'RUNNING' }, startTime, executionTime: startTime }),
    signal: async () => void seen.nudges++,
  };
  const client = {
    withAbortSignal: (_: AbortSignal, fn: () => Promise<unknown>) => fn(),
    workflow: {
      getHandle: (id: string) => (id === 'run-queued' ? run : scheduler),
      start: async () => {
        seen.starts++;
        runId = 'new';
      },
      list: async function* () {
        yield { workflowId: 'run-queued' };
      },
    },
  };
  return { client: client as unknown as Client, seen };
}

describe('scheduler watchdog', () => {
  it('a new chain whose recovery failed part-way (no worker to take the tenants yet) is recovered at a later check, queued runs nudged', async () => {
    const { client, seen } = fakeClient();
    let workerUp = false;
    const watchdog = startSchedulerWatchdog({
      client,
      config: loadConfig({ SCHEDULER_WATCHDOG_SECONDS: '3600' }),
      log: pino({ level: 'silent' }),
      onNewChain: async () => {
        if (!workerUp) throw new Error('the scheduler did not answer in time');
      },
      nudgeQueuedRuns: true,
    });
    try {
      await watchdog.check();
      expect(seen).toEqual({ starts: 1, recovers: 0, nudges: 0 });
      await watchdog.check();
      expect(seen).toEqual({ starts: 1, recovers: 0, nudges: 0 });
      workerUp = true;
      await watchdog.check();
      expect(seen).toEqual({ starts: 1, recovers: 1, nudges: 1 });
      // Once done, it is not owed again.
      await watchdog.check();
      expect(seen).toEqual({ starts: 1, recovers: 1, nudges: 1 });
    } finally {
      watchdog.stop();
    }
  });
});

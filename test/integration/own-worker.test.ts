import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityOf } from '../../src/activities/tool-activities';
import { agentTaskQueue } from '../../src/agent';
import { startWorker } from '../../src';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';
import { workerEnv } from '../support/worker-env';
import { activityAttempts } from '../support/activity-attempts';
import { toolIdentitySalt } from '../../src/fleet/identity-salt';

const root = path.join(__dirname, '..', '..');
const agents = path.join(root, 'test', 'support', 'agents');

/**
 * Agents defined outside src/ (test/support/agents, importing only the authoring API), served by a
 * worker the user starts (`fairway worker`, a child process it can kill), with the user's effect
 * function and tool. The API reads the same module (AGENTS) and takes the run; the stack's own worker
 * serves the built-ins only.
 */
/** Attempts of an effect function before its run fails (EFFECT_MAX_ATTEMPTS): 1 + 2 + 4 s of backoff. */
const EFFECT_ATTEMPTS = 4;

describe('your own agents on your own worker', () => {
  let s: TestStack;
  const children: ChildProcess[] = [];
  /** Each `fairway worker`'s output, for the report of a run that does not end. */
  const outputs: string[] = [];
  beforeAll(async () => {
    // A lease of 20 s: a killed worker's step is seen gone within half of it (10 s), not 30 s.
    s = await startTestStack({
      AGENTS: path.join(agents, 'research.ts'),
      LEASE_TTL_SECONDS: '20',
      EFFECT_MAX_ATTEMPTS: String(EFFECT_ATTEMPTS),
    });
  }, 120_000);
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await s?.close();
  });

  /** `fairway worker` in its own process, resolved once it serves. */
  async function cliWorker(credential: string): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [
        path.join(root, 'bin', 'fairway.cjs'),
        'worker',
        '--agents',
        path.join(agents, 'research.ts'),
        '--effects',
        path.join(agents, 'effects.ts'),
        '--tools',
        path.join(agents, 'tools.ts'),
      ],
      {
        env: workerEnv(s, { SEARCH_CREDENTIAL: credential }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let output = '';
    const slot = outputs.push('') - 1;
    await new Promise<void>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += d.toString();
        outputs[slot] = output;
        if (output.includes('fairway worker: serving')) resolve();
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', (d: Buffer) => void (outputs[slot] = output += d.toString()));
      child.once('exit', (code) => reject(new Error(`fairway worker exited ${code}: ${output}`)));
    });
    expect(output).toContain(agentTaskQueue(s.config.temporal.taskQueue, 'research'));
    return child;
  }

  /** SIGKILLs a worker and waits until it is gone. */
  async function stop(child: ChildProcess): Promise<void> {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  }

  /** Submits a `research` run (202 expected); its run id. */
  async function submitResearch(key: string, input: Record<string, unknown>): Promise<string> {
    const submitted = await s.call('POST', '/v1/runs', { token: key, body: { agent: 'research', input } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    return submitted.body.runId as string;
  }

  /**
   * The run's view once it has ended; when it does not within two minutes, what it was doing (its
   * pending activities, the end of its history, the workers' output) is printed before the failure.
   */
  async function ended(key: string, runId: string) {
    return waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
      120_000,
    ).catch(async (err: unknown) => {
      const handle = s.client.workflow.getHandle(runId);
      const d = await handle.describe().catch(String);
      const pending = typeof d === 'string' ? d : JSON.stringify(d.raw.pendingActivities ?? []);
      const events = (await handle.fetchHistory().catch(() => ({ events: [] }))).events ?? [];
      const tail = events.slice(-15).map((e) => `${String(e.eventId)} ${String(e.eventType)}`);
      console.log(`stuck run ${runId}: pending activities ${pending}; history tail ${tail.join(', ')}`);
      for (const o of outputs) console.log(`fairway worker output:\n${o.slice(-4000)}`);
      throw err;
    });
  }

  it('refuses to start a worker whose agents module breaks the workflow sandbox, naming the module', async () => {
    const breaker = path.join(agents, 'sandbox-breaker.ts');
    const err = await startWorker({ agents: [breaker], config: s.config }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(
      `Agents module ${breaker} breaks the workflow sandbox: it imports 'node:fs'`,
    );
    expect((err as Error).message).toContain('import only zod and fairway/agent');
  });

  it("runs the user's agent with its tool and its effect; the effect lands once across a worker kill", async () => {
    const tenant = `byoa-${s.id}`;
    const key = await s.tenant(tenant);
    const credential = `search-${s.id}`;
    const first = await cliWorker(credential);
    const runId = await submitResearch(key, { question: 'why', holdMs: 6000 });
    expect((await s.client.workflow.getHandle(runId).describe()).taskQueue).toBe(
      agentTaskQueue(s.config.temporal.taskQueue, 'research'),
    );

    // The effect landed and its activity completed; the worker dies in the step after it, before
    // the run completes.
    const effectKey = `${runId}:publish`;
    const handle = s.client.workflow.getHandle(runId);
    await waitFor(
      async () => ({
        delivered: s.sink.ledger.timesDelivered(effectKey),
        pending: ((await handle.describe()).raw.pendingActivities ?? []).map((a) => a.activityType?.name),
      }),
      (v) => v.delivered === 1 && !v.pending.includes('applyAgentEffect'),
      60_000,
    );
    await stop(first);
    await cliWorker(credential);

    const done = await ended(key, runId);
    expect(done.body.status, JSON.stringify(done.body.error)).toBe('completed');
    expect(s.sink.ledger.timesDelivered(effectKey)).toBe(1);
    expect(done.body.result).toMatchObject({
      hit: 'result for why',
      published: {
        applied: true,
        // The first delivery's answer, from the worker that was killed.
        result: { published: 'why -> result for why', key: effectKey, pid: first.pid },
      },
    });
    expect(done.body.toolCalls).toEqual([
      expect.objectContaining({
        tool: 'search',
        identity: identityOf('search', credential, toolIdentitySalt(undefined, s.config.dataDir)),
        outcome: 'ok',
      }),
    ]);
  });

  it('retries an effect whose worker died while it ran within its heartbeat timeout, not its 5 minutes', async () => {
    // Only this test's workers serve the queue: the one it kills must be the one running the effect.
    for (const c of children) await stop(c);
    const tenant = `byoa-held-${s.id}`;
    const key = await s.tenant(tenant);
    const credential = `search-held-${s.id}`;
    const first = await cliWorker(credential);
    const runId = await submitResearch(key, { question: 'held', effectHoldMs: 600_000 });
    const effectKey = `${runId}:publish`;
    const handle = s.client.workflow.getHandle(runId);
    // The effect runs on the first worker (holding before it delivers) when the worker is killed.
    const started = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    await waitFor(
      async () => (await handle.describe()).raw.pendingActivities ?? [],
      (pending) => pending.some((a) => a.activityType?.name === 'applyAgentEffect' && a.state === started),
      60_000,
    );
    expect(s.sink.ledger.timesDelivered(effectKey)).toBe(0);
    await stop(first);
    const second = await cliWorker(credential);
    const done = await ended(key, runId);
    expect(done.body.status, JSON.stringify(done.body.error)).toBe('completed');
    // Delivered once, by the worker that took the effect over, as a redelivery.
    expect(s.sink.ledger.timesDelivered(effectKey)).toBe(1);
    expect(done.body.result.published).toMatchObject({
      applied: true,
      result: { key: effectKey, pid: second.pid },
    });
  });

  it.each(['bigint', 'cycle'] as const)(
    'an effect that acted and then returned a %s is delivered once and fails its run clearly',
    async (answer) => {
      const tenant = `byoa-${answer}-${s.id}`;
      const key = await s.tenant(tenant);
      if (!children.some((c) => c.exitCode === null && c.signalCode === null))
        await cliWorker(`search-${answer}-${s.id}`);
      const runId = await submitResearch(key, { question: answer, effectAnswer: answer });
      const done = await ended(key, runId);
      expect(done.body.status).toBe('failed');
      expect(done.body.error.message).toMatch(/Effect "publish" acted .* not JSON/);
      // Counted where it lands: once, and the effect step ran once (no retry ran the function again).
      const effectKey = `${runId}:publish`;
      expect(s.sink.ledger.timesDelivered(effectKey)).toBe(1);
      expect(await activityAttempts(s, runId, 'applyAgentEffect')).toEqual([1]);
    },
  );

  it('an effect whose function fails every attempt fails its run after EFFECT_MAX_ATTEMPTS, naming the error', async () => {
    const tenant = `byoa-refused-${s.id}`;
    const key = await s.tenant(tenant);
    if (!children.some((c) => c.exitCode === null && c.signalCode === null))
      await cliWorker(`search-refused-${s.id}`);
    const runId = await submitResearch(key, { question: 'refused', effectRefused: true });
    const done = await ended(key, runId);
    expect(done.body.status).toBe('failed');
    expect(done.body.error).toMatchObject({
      code: 'effect_failed',
      message: expect.stringMatching(
        new RegExp(
          `Effect "publish" failed all ${EFFECT_ATTEMPTS} attempts .*downstream refused ${runId}:publish`,
        ),
      ),
    });
    // Nothing reached the sink, and the function ran exactly EFFECT_MAX_ATTEMPTS times (the history
    // records the last attempt's start).
    expect(s.sink.ledger.timesDelivered(`${runId}:publish`)).toBe(0);
    expect(await activityAttempts(s, runId, 'applyAgentEffect')).toEqual([EFFECT_ATTEMPTS]);
  });
});

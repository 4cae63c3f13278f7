import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../src';
import type { WorkerHandle } from '../../src';
import { publish } from '../support/agents/effects';
import { search } from '../support/agents/tools';
import { activityAttempts } from '../support/activity-attempts';
import { startTestStack, waitFor } from '../support/stack';
import { workerEnv } from '../support/worker-env';
import type { TestStack } from '../support/stack';

const research = path.join(__dirname, '..', 'support', 'agents', 'research.ts');
/** One attempt of an effect may take this long (EFFECT_TIMEOUT_SECONDS). */
const TIMEOUT_S = 5;

/**
 * Issue 44, item 3, on the real stack: an effect whose first attempt hangs past its start-to-close
 * timeout (its function ignores `ctx.signal`) gets a second attempt from Temporal, and that attempt
 * waits for the first instead of acting beside it: the sink counts one delivery.
 */
describe('an effect attempt past its timeout (real dev server)', () => {
  let s: TestStack;
  let worker: WorkerHandle | undefined;
  /** Calls of the effect function on this worker, and how many of them have returned or thrown. */
  const calls = { started: 0, ended: 0 };
  beforeAll(async () => {
    s = await startTestStack({ AGENTS: research, EFFECT_TIMEOUT_SECONDS: String(TIMEOUT_S) });
    // The user's effect delivers to the sink that EFFECT_SINK_URL names, as a worker's would.
    process.env.EFFECT_SINK_URL = s.sink.url;
    worker = await startWorker({
      agents: [research],
      effects: {
        publish: async (args, ctx) => {
          calls.started++;
          try {
            return await publish(args, ctx);
          } finally {
            calls.ended++;
          }
        },
      },
      tools: { search },
      config: workerEnv(s) as Record<string, string>,
    });
  }, 120_000);
  afterAll(async () => {
    await worker?.close();
    await s?.close();
  });

  it('the next attempt waits for the hung one: the effect lands once, and the run completes', async () => {
    const key = await s.tenant('hung');
    const holdMs = 3 * TIMEOUT_S * 1000;
    const submitted = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'research', input: { question: 'hung', effectHoldMs: holdMs } },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const runId = submitted.body.runId as string;
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
      120_000,
    );
    expect(done.body.status, JSON.stringify(done.body.error)).toBe('completed');
    // Temporal did start a second attempt (the first passed its timeout)...
    const effectStarts = await activityAttempts(s, runId, 'applyAgentEffect');
    expect(effectStarts.at(-1)).toBeGreaterThanOrEqual(2);
    // ...which did not act beside the first: once every call of the function has returned (the
    // first attempt's after its hold), one call was made and one delivery landed.
    await waitFor(
      async () => ({ ...calls }),
      (c) => c.started > 0 && c.ended === c.started,
      60_000,
    );
    expect(calls.started).toBe(1);
    const effectKey = `${runId}:publish`;
    expect(s.sink.ledger.timesDelivered(effectKey)).toBe(1);
    expect(done.body.result.published).toMatchObject({
      result: { key: effectKey, published: 'hung -> result for hung' },
    });
  });
});

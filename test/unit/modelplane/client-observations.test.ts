import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient } from '../../../src/activities/model-client';
import { ObservationWindow } from '../../../src/activities/observations';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import type { ApplicationFailure } from '@temporalio/common';
import { getJson, handClock, post } from './sim-client';

/** The first leg of the governor's loop: what the model client tells the worker's observation window. */
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function setup(tpm: number) {
  const clock = handClock();
  sim = await startSimulator({
    tpm,
    rpm: 1000,
    seed: 9,
    latency: { baseMs: 0, perTokenMs: 0 },
    now: clock.now,
    port: 0,
  });
  const window = new ObservationWindow();
  const client = createModelClient({
    baseUrl: sim.url,
    model: 'sim-1',
    onObservation: (s) => window.add(s),
    now: clock.now,
  });
  return { url: sim.url, clock, window, client };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { type?: string }) => err.type ?? 'error',
  );

describe('model client → observation window', () => {
  it('reports throttles with the wait and the quota, and names the step so early retries are seen', async () => {
    const { url, clock, window, client } = await setup(600);
    expect(await outcome(client.complete({ runId: 'r', step: 1, tokens: 600 }))).toBe('ok');
    expect(await outcome(client.complete({ runId: 'r', step: 2, tokens: 60 }))).toBe('ModelThrottled');
    expect(window.drain(clock.now())).toMatchObject({
      calls: 2,
      throttled: 1,
      maxRetryAfterMs: 6000,
      tokens: 600,
      limitTokens: 600,
      remainingTokens: 0,
    });
    clock.advance(3000);
    await outcome(client.complete({ runId: 'r', step: 2, tokens: 60 })); // half-way through its wait
    clock.advance(3000);
    expect(await outcome(client.complete({ runId: 'r', step: 2, tokens: 60 }))).toBe('ok');
    expect(await getJson(`${url}/admin/stats`)).toMatchObject({ earlyRetries: 1 });
  });

  it('does not count the spend cap as a throttle: it says nothing about the rate', async () => {
    const { url, clock, window, client } = await setup(100_000);
    await post(`${url}/admin/spend-cap`, { enabled: true });
    expect(await outcome(client.complete({ runId: 'r', step: 1, tokens: 50 }))).toBe('ModelSpendCap');
    expect(window.drain(clock.now())).toMatchObject({
      calls: 1,
      throttled: 0,
      maxRetryAfterMs: 0,
      tokens: 0,
    });
  });

  it.each([
    ['vendor-header', 'only `llm_provider-retry-after` (LiteLLM)', 6000],
    ['body', 'only the error text', 6000],
  ])('pauses on a 429 whose wait is in %s: %s', async (mode, _what, waitMs) => {
    const { url, clock, window, client } = await setup(600);
    expect(await post(`${url}/admin/wait-signal`, { mode })).toMatchObject({ status: 200 });
    expect(await outcome(client.complete({ runId: 'r', step: 1, tokens: 600 }))).toBe('ok');
    const refused = await client.complete({ runId: 'r', step: 2, tokens: 60 }).catch((e: unknown) => e);
    const f = refused as ApplicationFailure;
    expect(f.type).toBe('ModelThrottled');
    expect(f.nextRetryDelay).toBe(waitMs);
    expect(f.details).toEqual([{ retryAfterMs: waitMs, remainingTokens: null }]);
    // The wait reaches the fleet: the window's report carries the pause.
    expect(window.drain(clock.now())).toMatchObject({
      throttled: 1,
      maxRetryAfterMs: waitMs,
      retryUntil: clock.now() + waitMs,
    });
  });
});

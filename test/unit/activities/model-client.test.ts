import { ApplicationFailure } from '@temporalio/common';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelClient, ModelErrorType } from '../../../src/activities/model-client';
import type { ModelClientOptions } from '../../../src/activities/model-client';
import { ObservationWindow } from '../../../src/activities/observations';
import type { ModelCallSample } from '../../../src/activities/observations';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import { handClock } from '../modelplane/sim-client';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function sim(tpm: number, rpm = 1000): Promise<RunningSimulator & { advance(ms: number): void }> {
  const clock = handClock();
  const s = await startSimulator({
    tpm,
    rpm,
    seed: 5,
    latency: { baseMs: 0, perTokenMs: 0 },
    now: clock.now,
    port: 0,
  });
  cleanups.push(() => s.close());
  return Object.assign(s, { advance: clock.advance });
}

function client(baseUrl: string, extra: Partial<ModelClientOptions> = {}) {
  const samples: ModelCallSample[] = [];
  const c = createModelClient({ baseUrl, model: 'sim-1', onObservation: (s) => samples.push(s), ...extra });
  return { c, samples };
}

async function failureOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => expect.fail('expected the call to fail'),
    (err: unknown) => err,
  );
}

describe('model client against the simulator', () => {
  it('spends exactly the step tokens and reports the call with its rate-limit picture', async () => {
    const s = await sim(1000);
    const { c, samples } = client(s.url);
    const r = await c.complete({ runId: 'run-a-1', step: 0, tokens: 100 });
    expect(r.usedTokens).toBe(100);
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    expect(samples).toEqual([
      expect.objectContaining({
        throttled: false,
        tokens: 100,
        remainingTokens: 900,
        limitTokens: 1000,
        resetTokensMs: 6000,
      }),
    ]);
    expect(samples[0]).not.toHaveProperty('retryAfterMs');
  });

  it('bills the call to its tenant (OpenAI user field) and caps a day-long Retry-After at the maximum pause', async () => {
    const s = await sim(100_000);
    const { c, samples } = client(s.url, { maxPauseMs: 5000 });
    await c.complete({ tenant: 'acme', runId: 'r', step: 0, tokens: 100 });
    await c.complete({ tenant: 'globex', runId: 'g', step: 0, tokens: 40 });
    expect(s.state.stats().bill).toEqual({ acme: 100, globex: 40 });
    s.state.faults.push({ retryAfter: '86400', resetTokens: 'whenever', times: 1 });
    const err = (await failureOf(
      c.complete({ tenant: 'acme', runId: 'r', step: 1, tokens: 100 }),
    )) as ApplicationFailure;
    expect(err.type).toBe(ModelErrorType.throttled);
    expect(err.nextRetryDelay).toBe(5000);
    // The sample keeps the provider's word (parsed strictly); the window caps it when it aggregates.
    expect(samples.at(-1)).toMatchObject({ throttled: true, retryAfterMs: 86_400_000 });
    expect(samples.at(-1)).not.toHaveProperty('resetTokensMs');
    // A spend cap for one tenant fails only that tenant's calls.
    s.state.spendCapTenants.add('globex');
    const capped = (await failureOf(
      c.complete({ tenant: 'globex', runId: 'g', step: 1, tokens: 10 }),
    )) as ApplicationFailure;
    expect(capped.type).toBe(ModelErrorType.spendCap);
    expect((await c.complete({ tenant: 'acme', runId: 'r', step: 2, tokens: 10 })).usedTokens).toBe(10);
  });

  it('logs a wait header it cannot read once per format, and reads on to the next signal', async () => {
    const s = await sim(100_000);
    const warned: { obj: object; msg: string }[] = [];
    const { c, samples } = client(s.url, { log: { warn: (obj, msg) => warned.push({ obj, msg }) } });
    s.state.faults.push({ retryAfter: 'not before dawn', resetTokens: '2.5s', times: 3 });
    for (let step = 0; step < 3; step += 1) {
      const err = (await failureOf(c.complete({ runId: 'u', step, tokens: 10 }))) as ApplicationFailure;
      expect(err.nextRetryDelay).toBe(2500); // the reset, when no wait is stated
    }
    expect(samples.map((x) => x.retryAfterMs)).toEqual([2500, 2500, 2500]);
    const unknown = warned.filter((w) => /unknown format/.test(w.msg));
    expect(unknown.map((w) => w.obj)).toEqual([{ header: 'retry-after', value: 'not before dawn' }]);
  });

  it('accepts a base URL ending in /v1', async () => {
    const s = await sim(1000);
    const { c } = client(`${s.url}/v1/`);
    expect((await c.complete({ runId: 'r', step: 1, tokens: 50 })).usedTokens).toBe(50);
  });

  it('turns a 429 into a retryable ModelThrottled whose nextRetryDelay is the provider wait', async () => {
    const s = await sim(1000);
    const { c, samples } = client(s.url);
    for (let i = 0; i < 10; i += 1) await c.complete({ runId: 'r', step: i, tokens: 100 });
    const err = await failureOf(c.complete({ runId: 'r', step: 10, tokens: 100 }));
    expect(err).toBeInstanceOf(ApplicationFailure);
    const f = err as ApplicationFailure;
    expect(f.type).toBe(ModelErrorType.throttled);
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBe(6000);
    expect(samples.at(-1)).toMatchObject({
      throttled: true,
      tokens: 0,
      retryAfterMs: 6000,
      remainingTokens: 0,
    });

    s.advance(6000);
    expect((await c.complete({ runId: 'r', step: 10, tokens: 100 })).usedTokens).toBe(100);
  });

  it('turns the spend cap into a non-retryable ModelSpendCap with a clear reason', async () => {
    const s = await sim(100_000);
    await fetch(`${s.url}/admin/spend-cap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
    });
    const { c, samples } = client(s.url);
    const f = (await failureOf(c.complete({ runId: 'r', step: 0, tokens: 10 }))) as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.type).toBe(ModelErrorType.spendCap);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/spend cap/);
    expect(samples).toEqual([expect.objectContaining({ throttled: true, tokens: 0, fault: 'key' })]);
  });

  it('turns a refused key (401, 403) into a retryable ModelKeyRefused that waits longer each attempt', async () => {
    const s = await sim(100_000);
    const keyRetry = { minMs: 2000, maxMs: 7000 };
    for (const status of [401, 403]) {
      await fetch(`${s.url}/admin/rejected-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ enabled: true, status }),
      });
      const { c, samples } = client(s.url, { keyRetry });
      const waits: unknown[] = [];
      for (const attempt of [1, 2, 3, undefined]) {
        const f = (await failureOf(
          c.complete({ runId: 'r', step: 0, tokens: 10, attempt }),
        )) as ApplicationFailure;
        expect(f).toBeInstanceOf(ApplicationFailure);
        expect(f.type).toBe(ModelErrorType.keyRefused);
        expect(f.nonRetryable).toBe(false);
        expect(f.message).toMatch(new RegExp(`refused the API key .* ${status}`));
        waits.push(f.nextRetryDelay);
      }
      expect(waits).toEqual([2000, 4000, 7000, 7000]);
      expect(samples.map((x) => [x.fault, x.throttled, x.tokens])).toEqual(
        samples.map(() => ['key', false, 0]),
      );
    }
    await fetch(`${s.url}/admin/rejected-key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    });
    expect((await client(s.url).c.complete({ runId: 'r', step: 1, tokens: 10 })).usedTokens).toBe(10);
  });

  it('turns another 4xx into a non-retryable ModelRequestRejected', async () => {
    const s = await sim(1000);
    const { c } = client(s.url, { model: '' });
    const f = (await failureOf(c.complete({ runId: 'r', step: 0, tokens: 10 }))) as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.type).toBe(ModelErrorType.rejected);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/400/);
  });

  it('throws a plain, retryable Error for a 5xx and for an unreachable provider', async () => {
    const broken = createServer((_req, res) => res.writeHead(503).end('overloaded'));
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => broken.close(() => resolve())));
    const { c: c5xx, samples } = client(`http://127.0.0.1:${(broken.address() as AddressInfo).port}`);
    const e5xx = await failureOf(c5xx.complete({ runId: 'r', step: 0, tokens: 10 }));
    expect(e5xx).toBeInstanceOf(Error);
    expect(e5xx).not.toBeInstanceOf(ApplicationFailure);
    expect((e5xx as Error).message).toMatch(/503/);
    // Sampled for the key breaker: a server error, nothing served.
    expect(samples).toEqual([{ at: expect.any(Number), throttled: false, tokens: 0, fault: 'server' }]);

    const gone = await startSimulator({ tpm: 1, rpm: 1, seed: 1, port: 0 });
    await gone.close();
    const eNet = await failureOf(client(gone.url).c.complete({ runId: 'r', step: 0, tokens: 10 }));
    expect(eNet).not.toBeInstanceOf(ApplicationFailure);
    expect((eNet as Error).message).toMatch(/unreachable/);
  });

  it('feeds an ObservationWindow that sums a burst into one observation', async () => {
    const s = await sim(500);
    const window = new ObservationWindow();
    const c = createModelClient({ baseUrl: s.url, model: 'sim-1', onObservation: (x) => window.add(x) });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => c.complete({ runId: 'r', step: i, tokens: 100 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(window.drain(123)).toEqual({
      at: 123,
      calls: 8,
      throttled: 3,
      maxRetryAfterMs: 12_000,
      remainingTokens: 0,
      limitTokens: 500,
      resetTokensMs: 60_000,
      // The simulator counts the five served requests against its 1,000 a minute.
      remainingRequests: 995,
      limitRequests: 1000,
      resetRequestsMs: expect.any(Number) as number,
      tokens: 500,
      retryUntil: expect.any(Number) as number,
      // The five served calls were timed; the three refused ones are no latency evidence.
      latencyCalls: 5,
      latencyMs: expect.any(Number) as number,
      latencyTokens: 500,
    });
  });
});

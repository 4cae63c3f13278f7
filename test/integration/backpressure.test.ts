import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { Reply, TestStack } from '../support/stack';

/**
 * Issue 4 at the door and at the wall, on the real stack: a tenant's backlog cap sheds the excess
 * with 429 queue_full and a Retry-After while every accepted unit completes; the provider's spend
 * cap fails exactly the runs that hit it, with the reason; and a provider that throttles makes the
 * governor slow admission while the runs wait out every Retry-After and complete.
 */
const TPM = 60_000;

interface SimStats {
  calls: number;
  throttled: number;
  tokens: number;
  earlyRetries: number;
}

describe('backpressure: queue caps, spend cap and throttling on a real stack', () => {
  let s: TestStack;
  const sim = async <T = SimStats>(path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${s.simUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };
  const scheduler = async () => (await s.call('GET', '/v1/admin/scheduler')).body;
  const runs = (key: string, ids: string[]) =>
    Promise.all(ids.map(async (id) => (await s.call('GET', `/v1/runs/${id}`, { token: key })).body));
  // Waits on the tenant's backlog first (one request per poll: polling every run would query the
  // scheduler once per queued run, and that load slowed the runs it waited for), then reads each run.
  const settled = async (key: string, ids: string[], timeoutMs: number) => {
    await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (v) => v.body?.queued?.total === 0 && v.body?.inFlight === 0,
      timeoutMs,
      250,
    );
    return waitFor(
      () => runs(key, ids),
      (vs) => vs.every((v) => ['completed', 'failed', 'cancelled'].includes(v?.status)),
      timeoutMs,
      500,
    );
  };

  beforeAll(async () => {
    s = await startTestStack({ MODEL_TPM: String(TPM), MODEL_RPM: '10000000', FLEET_CONCURRENCY: '50' });
  });
  afterAll(() => s?.close());

  // Three times the queue's cap at once (the shedding and the spread of Retry-After do not depend on the size).
  const BURST = 150;
  const CAP = 50;
  it('sheds the excess of a burst of three times the queue cap with 429 queue_full and Retry-After; every 202 completes', async () => {
    const tenant = `bp-burst-${s.id}`;
    const key = await s.tenant(tenant, { maxQueued: CAP, maxInFlight: 5 });
    const input = { steps: 1, tokensPerStep: 50, stepMs: 300 };
    const answers: Reply[] = await Promise.all(
      Array.from({ length: BURST }, () =>
        s.call('POST', '/v1/runs', { token: key, body: { agent: 'synthetic', input } }),
      ),
    );
    const admittedByNow = (await scheduler()).counters.admitted as number;

    const accepted = answers.filter((a) => a.status === 202);
    const shed = answers.filter((a) => a.status !== 202);
    // Exactly the cap, plus what was admitted (leaving the queue) while the burst came in.
    expect(accepted.length).toBeGreaterThanOrEqual(CAP);
    expect(accepted.length).toBeLessThanOrEqual(CAP + admittedByNow);
    expect(shed.length).toBe(BURST - accepted.length);
    for (const a of shed) {
      expect(a.status).toBe(429);
      expect(a.body.error.code).toBe('queue_full');
      expect(a.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    }
    // Honest: the k-th unit over the cap waits for k admissions at the tenant's rate, so the
    // advertised waits spread out rather than being one constant.
    const waits = shed.map((a) => Number(a.headers.get('retry-after')));
    console.log(
      `burst: ${accepted.length} accepted (${admittedByNow} admitted meanwhile), ${shed.length} shed, Retry-After ${Math.min(...waits)}–${Math.max(...waits)} s`,
    );
    expect(Math.max(...waits)).toBeGreaterThan(Math.min(...waits));
    expect(Math.max(...waits)).toBeLessThanOrEqual(3600);

    const ids = accepted.map((a) => a.body.runId as string);
    const done = await settled(key, ids, 120_000);
    expect(done.map((v) => v.status)).toEqual(ids.map(() => 'completed'));
    const me = await s.call('GET', '/v1/tenants/me', { token: key });
    expect(me.body.inFlight).toBe(0);
  });

  it('fails only the runs that hit the spend cap, with model_spend_cap as the reason', async () => {
    const tenant = `bp-cap-${s.id}`;
    const key = await s.tenant(tenant, { maxQueued: 1000, maxInFlight: 50 });
    const submit = async (n: number) => {
      const rs = await Promise.all(
        Array.from({ length: n }, () =>
          s.call('POST', '/v1/runs', {
            token: key,
            body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 50 } },
          }),
        ),
      );
      expect(rs.map((r) => r.status)).toEqual(rs.map(() => 202));
      return rs.map((r) => r.body.runId as string);
    };

    const before = await submit(5);
    expect((await settled(key, before, 60_000)).map((v) => v.status)).toEqual(before.map(() => 'completed'));

    await sim('/admin/spend-cap', { enabled: true });
    const capped = await submit(5);
    const failed = await settled(key, capped, 60_000);
    await sim('/admin/spend-cap', { enabled: false });
    for (const v of failed) {
      expect(v.status).toBe('failed');
      expect(v.error.code).toBe('model_spend_cap');
      expect(v.error.message).toMatch(/spend cap/);
    }

    const after = await submit(5);
    expect((await settled(key, after, 60_000)).map((v) => v.status)).toEqual(after.map(() => 'completed'));
    // The runs finished before the cap were not touched by it.
    expect((await runs(key, before)).map((v) => v.status)).toEqual(before.map(() => 'completed'));
    const counters = (await scheduler()).counters;
    expect(counters.failed).toBe(5);
  });

  it('slows admission when the provider throttles; runs honour every Retry-After and complete', async () => {
    const tenant = `bp-wall-${s.id}`;
    const key = await s.tenant(tenant, { maxQueued: 1000, maxInFlight: 50 });
    // A provider already busy (its bucket empty) and units that spend six times their estimate:
    // the governor admits too much at first and meets the wall.
    await sim('/admin/capacity', { tpm: 0 });
    await sim('/admin/capacity', { tpm: TPM });
    const simBefore = await sim('/admin/stats');
    const govBefore = (await scheduler()).governor;

    // Half the runs take short steps (local activities, retried by the worker), half longer ones
    // (regular activities, retried by the server): both must wait out the provider's Retry-After.
    const rs = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        s.call('POST', '/v1/runs', {
          token: key,
          body: {
            agent: 'synthetic',
            input: { steps: 2, tokensPerStep: 300, stepMs: i % 2 === 0 ? 0 : 400 },
            estimatedTokens: 100,
          },
        }),
      ),
    );
    expect(rs.map((r) => r.status)).toEqual(rs.map(() => 202));
    const ids = rs.map((r) => r.body.runId as string);

    const governor = await waitFor(
      async () => (await scheduler()).governor,
      // The wall itself, not only the gentle slowdown before it (a report that shows the bucket low
      // before any 429 decreases too: with reports flushed every 100 ms that one may come first).
      (g) => g.decreases > govBefore.decreases && g.throttledRecently,
      30_000,
      250,
    );
    expect(governor.decreases).toBeGreaterThan(govBefore.decreases);
    expect(governor.throttledRecently).toBe(true);
    // A multiplicative cut below the quota's share (0.7 × 95% of it). The slots are cut too, from the
    // governor's limit (or from those in flight, when they used it), never from a near-idle count.
    expect(governor.tokensPerMinute).toBeLessThanOrEqual(0.7 * 0.95 * TPM + 1);
    expect(governor.concurrencyLimit).toBeLessThan(govBefore.concurrencyLimit);
    expect(governor.concurrencyLimit).toBeGreaterThan(1);

    const done = await settled(key, ids, 120_000);
    expect(done.map((v) => v.status)).toEqual(ids.map(() => 'completed'));
    expect(done.every((v) => v.usage.tokens === 600)).toBe(true);
    const simAfter = await sim('/admin/stats');
    console.log(
      `wall: ${simAfter.calls - simBefore.calls} calls, ${simAfter.throttled - simBefore.throttled} throttled, governor ${govBefore.tokensPerMinute} → ${governor.tokensPerMinute} tokens/min, limit ${govBefore.concurrencyLimit} → ${governor.concurrencyLimit}`,
    );
    expect(simAfter.throttled - simBefore.throttled).toBeGreaterThan(0);
    expect(simAfter.earlyRetries).toBe(0);
    // The ledger charges what the provider billed this tenant (a retried call is billed and charged
    // again), and every run got its 600 tokens.
    const bill = (await sim<{ tenants: Record<string, number> }>('/admin/bill')).tenants[tenant]!;
    expect(bill).toBeGreaterThanOrEqual(30 * 600);
    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (v) => v.body.ledger.reserved === 0 && v.body.ledger.spent === bill,
      20_000,
    );
    expect(me.body.ledger.spent).toBe(bill);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simAdmin, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FINAL = ['completed', 'failed', 'cancelled'];

/**
 * The provider refuses the key (every call 401): the runs already admitted wait instead of failing,
 * the key breaker opens within seconds and pauses admission (queued runs say why), letting one probe
 * unit through per backoff; once the key is fixed a served call closes it and every run completes.
 */
describe('a rejected key pauses admission; runs wait and complete once it is fixed', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
      FLEET_CONCURRENCY: '20',
      MODEL_BREAKER_PROBE_MIN_SECONDS: '1',
      MODEL_BREAKER_PROBE_MAX_SECONDS: '2',
    });
  });
  afterAll(() => s?.close());

  const sim = (route: string, body?: unknown) => simAdmin(s, route, body);
  const scheduler = async () => (await s.call('GET', '/v1/admin/scheduler')).body;
  const submit = async (key: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await s.call('POST', '/v1/runs', {
        token: key,
        body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 50 } },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      ids.push(r.body.runId as string);
    }
    return ids;
  };
  const views = (key: string, ids: string[]) =>
    Promise.all(ids.map(async (id) => (await s.call('GET', `/v1/runs/${id}`, { token: key })).body));
  /** How many of `ids` have reached the simulator (a call, refused or not). */
  const reached = async (ids: string[]) =>
    Object.keys(await sim(`/admin/first-calls?${ids.map((id) => `runId=${id}`).join('&')}`)).length;

  it('holds admitted runs, pauses admission but for probes, and resumes on its own when the key works', async () => {
    const tenant = `kb-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 50, maxQueued: 1000 });
    await sim('/admin/rejected-key', { enabled: true, status: 401 });

    const admitted = await submit(key, 4);
    const open = await waitFor(
      scheduler,
      (st) => st.governor?.breaker?.state !== 'closed' && st.governor?.breaker !== undefined,
      15_000,
    );
    expect(open.governor.breaker).toMatchObject({ reason: 'key_refused', trips: 1 });
    expect((await sim('/admin/stats')).refused).toBeGreaterThanOrEqual(3);

    // More queued runs than the probes the test waits for, so that probes never run out of units.
    const queued = await submit(key, 20);
    // Queued runs explain the pause (the one let through as a probe, if any, is running). A run's
    // explanation is the scheduler's answer to a query, which a loaded machine may leave unanswered
    // in one poll: each queued run must be seen explained in some poll.
    const explained = new Map<string, string>();
    await waitFor(
      () => views(key, queued),
      (vs) => {
        for (const v of vs) if (v.waitingOn?.code === 'provider') explained.set(v.runId, v.waitingOn.message);
        return explained.size > 0 && vs.every((v) => v.status === 'running' || explained.has(v.runId));
      },
      30_000,
    );
    const why = [...explained.values()][0];
    expect(why).toMatch(/refused the API key.*admission is paused/);

    // Over a window of two more probes, admission let through only the probes, and only probe
    // units of the queued runs reached the provider.
    const from = await scheduler();
    const until = await waitFor(
      scheduler,
      (st) => st.governor.breaker.probes >= from.governor.breaker.probes + 2,
      20_000,
    );
    const probes = until.governor.breaker.probes;
    expect(until.counters.admitted - from.counters.admitted).toBeLessThanOrEqual(
      probes - from.governor.breaker.probes,
    );
    expect(await reached(queued)).toBeLessThanOrEqual(probes);
    expect(until.governor.breaker.state).not.toBe('closed');
    // Nobody failed: the admitted runs' steps were refused and wait.
    const meanwhile = await views(key, [...admitted, ...queued]);
    expect(meanwhile.filter((v) => FINAL.includes(v.status))).toEqual([]);
    expect(
      (await views(key, admitted)).map((v) => v.status),
      'the admitted runs still hold their slots',
    ).toEqual(admitted.map(() => 'running'));

    await sim('/admin/rejected-key', { enabled: false });
    const closed = await waitFor(scheduler, (st) => st.governor.breaker.state === 'closed', 15_000);
    expect(closed.governor.breaker.trips).toBeGreaterThanOrEqual(1);
    const done = await waitFor(
      () => views(key, [...admitted, ...queued]),
      (vs) => vs.every((v) => FINAL.includes(v.status)),
      60_000,
      300,
    );
    expect(done.map((v) => v.status)).toEqual(done.map(() => 'completed'));
    const bill = await sim('/admin/bill');
    expect(bill.tenants[tenant]).toBe(24 * 2 * 50);
  });
});

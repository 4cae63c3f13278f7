import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FINAL = ['completed', 'failed', 'cancelled'];
const MAX_PAUSE_S = 5;

/**
 * The provider misbehaves: a Retry-After of a day, an unparseable reset and Retry-After, and a
 * spend-cap 429 for one tenant. The fleet pauses at most MODEL_MAX_PAUSE_SECONDS, only the spend-capped
 * run fails, and the ledger equals the provider's bill. And a budget is a cap: runs that declare 1
 * token reserve what their agent estimates, so a budget of 5,000 admits at most 5 runs of 1,000.
 * A 429 whose only wait is a gateway's vendor header (`llm_provider-retry-after`) pauses the fleet too.
 */
describe('a governor a header cannot break, and a budget that is a cap', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
      FLEET_CONCURRENCY: '20',
      MODEL_MAX_PAUSE_SECONDS: String(MAX_PAUSE_S),
    });
  });
  afterAll(() => s?.close());

  const sim = async (route: string, body?: unknown) => {
    const res = await fetch(`${s.simUrl!}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };
  const run = (key: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    s.call('POST', '/v1/runs', { token: key, body: { agent: 'synthetic', input, ...extra } });
  const final = (key: string, id: string) =>
    waitFor(
      () => s.call('GET', `/v1/runs/${id}`, { token: key }),
      (v) => FINAL.includes(v.body?.status),
      120_000,
      300,
    ).then((r) => r.body);

  it('pauses the fleet at most the maximum for Retry-After: 86400 and garbage; a spend cap fails only its run', async () => {
    const okTenant = `ok-${s.id}`;
    const capped = `capped-${s.id}`;
    const okKey = await s.tenant(okTenant, { maxInFlight: 20 });
    const cappedKey = await s.tenant(capped, { maxInFlight: 20 });
    await sim('/admin/faults', { retryAfter: '86400', times: 1 });
    await sim('/admin/faults', { retryAfter: 'soon', resetTokens: 'in a while', times: 1 });
    await sim('/admin/spend-cap', { enabled: true, tenant: capped });

    // Watch the governor's pause while the faults play out.
    let worstPauseMs = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const st = await s.call('GET', '/v1/admin/scheduler');
        const until = st.body?.governor?.pausedUntil;
        if (typeof until === 'string') worstPauseMs = Math.max(worstPauseMs, Date.parse(until) - Date.now());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const started = Date.now();
    const okIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await run(okKey, { steps: 2, tokensPerStep: 100 });
      expect(r.status).toBe(202);
      okIds.push(r.body.runId);
    }
    const c = await run(cappedKey, { steps: 2, tokensPerStep: 100 });
    expect(c.status).toBe(202);

    const oks = await Promise.all(okIds.map((id) => final(okKey, id)));
    const cappedRun = await final(cappedKey, c.body.runId);
    watching = false;
    await watcher;
    const stats = await sim('/admin/stats');
    console.log(
      `faults: ${stats.throttled} 429s, worst pause seen ${worstPauseMs} ms, all done in ${Date.now() - started} ms`,
    );

    expect(stats.throttled).toBeGreaterThanOrEqual(3); // both faults and the spend cap were served
    expect(oks.map((r) => r.status)).toEqual(oks.map(() => 'completed'));
    expect(cappedRun).toMatchObject({ status: 'failed', error: { code: 'model_spend_cap' } });
    // The day-long Retry-After paused the fleet (the watcher saw it), for at most the maximum
    // (measured from the call).
    expect(worstPauseMs, 'no pause was ever seen').toBeGreaterThan(0);
    expect(worstPauseMs).toBeLessThanOrEqual(MAX_PAUSE_S * 1000);
    const governor = (await s.call('GET', '/v1/admin/scheduler')).body.governor;
    expect(
      governor.pausedUntil === null || Date.parse(governor.pausedUntil) <= Date.now() + MAX_PAUSE_S * 1000,
    ).toBe(true);
    // The ledger follows the provider's bill, tenant by tenant.
    const bill = await sim('/admin/bill');
    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: okKey }),
      (v) => v.body.ledger.reserved === 0 && v.body.ledger.spent === bill.tenants[okTenant],
      20_000,
    );
    expect(me.body.ledger.spent).toBe(bill.tenants[okTenant]);
    expect(me.body.ledger.spent).toBe(6 * 2 * 100);
  });

  it('a budget of 5,000: 20 runs declaring 1 token that use 1,000 each; at most 5 complete, spent ≤ 5,000 = the bill', async () => {
    const tenant = `budget-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 20, budget: { tokens: 5000, period: 'day' } });
    const accepted: string[] = [];
    const refused: any[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await run(key, { steps: 2, tokensPerStep: 500 }, { estimatedTokens: 1 });
      if (r.status === 202) accepted.push(r.body.runId);
      else refused.push(r);
    }
    for (const r of refused)
      expect(r).toMatchObject({ status: 429, body: { error: { code: 'budget_exhausted' } } });
    const runs = await Promise.all(accepted.map((id) => final(key, id)));
    const completed = runs.filter((r) => r.status === 'completed').length;
    for (const r of runs.filter((x) => x.status !== 'completed'))
      expect(r.error?.code).toBe('budget_exhausted');
    expect(completed).toBeLessThanOrEqual(5);
    expect(completed).toBeGreaterThanOrEqual(1);
    const bill = await sim('/admin/bill');
    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (v) => v.body.ledger.reserved === 0 && v.body.ledger.spent === (bill.tenants[tenant] ?? 0),
      20_000,
    );
    console.log(
      `budget: ${completed} completed, ${refused.length} refused at the door, spent ${me.body.ledger.spent}`,
    );
    expect(me.body.ledger.spent).toBeLessThanOrEqual(5000);
    expect(me.body.ledger.spent).toBe(bill.tenants[tenant]);
  });

  it('pauses the fleet on a 429 whose only wait is `llm_provider-retry-after` (a LiteLLM gateway)', async () => {
    const tenant = `vendor-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 20 });
    // An earlier pause must be over, so a pause seen now is this throttle's.
    const pausedUntil = async () => (await s.call('GET', '/v1/admin/scheduler')).body?.governor?.pausedUntil;
    await waitFor(pausedUntil, (u) => typeof u !== 'string' || Date.parse(u) <= Date.now(), 20_000, 200);
    const since = Date.now();
    await sim('/admin/wait-signal', { mode: 'vendor-header' });
    await sim('/admin/capacity', { tpm: 300 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await run(key, { steps: 1, tokensPerStep: 100 });
        expect(r.status).toBe(202);
        ids.push(r.body.runId);
      }
      const until = await waitFor(
        pausedUntil,
        (u) => typeof u === 'string' && Date.parse(u) > since,
        30_000,
        100,
      );
      // The gateway's wait (whole seconds) was read, and cut to the maximum pause.
      expect(Date.parse(until) - Date.now()).toBeLessThanOrEqual(MAX_PAUSE_S * 1000);
      const stats = await sim('/admin/stats');
      expect(stats.waitSignal).toBe('vendor-header');
      expect(stats.throttled).toBeGreaterThan(0);
      await sim('/admin/capacity', { tpm: 1_000_000_000 });
      const runs = await Promise.all(ids.map((id) => final(key, id)));
      expect(runs.map((r) => r.status)).toEqual(ids.map(() => 'completed'));
    } finally {
      await sim('/admin/capacity', { tpm: 1_000_000_000 });
      await sim('/admin/wait-signal', { mode: 'standard' });
    }
  });
});

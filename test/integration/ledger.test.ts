import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExtraWorker, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };
const FINAL = ['completed', 'failed', 'cancelled'];

describe('the budget ledger', () => {
  let s: TestStack;
  let restarted: { close(): Promise<void> } | undefined;
  beforeAll(async () => {
    // A small history budget: the ledger must travel exactly across continue-as-new.
    s = await startTestStack({ FLEET_CONCURRENCY: '20', ...FAST }, { scheduler: { maxHistoryEvents: 30 } });
  });
  afterAll(async () => {
    await restarted?.close();
    await s?.close();
  });

  const post = (key: string, body: Record<string, unknown>) =>
    s.call('POST', '/v1/runs', { token: key, body: { agent: 'synthetic', ...body } });

  it('reconciles: spent equals the sum of usage after failures, cancellations and overruns; nothing stays reserved', async () => {
    const tenant = `ledger-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 4, budget: { tokens: 1_000_000, period: 'day' } });
    const ids: string[] = [];
    const accept = async (p: Promise<{ status: number; body: any }>) => {
      const r = await p;
      expect(r.status).toBe(202);
      ids.push(r.body.runId);
      return r.body.runId as string;
    };
    for (let i = 0; i < 6; i++) await accept(post(key, { input: { steps: 2, tokensPerStep: 100 } }));
    // Overruns: each uses 300 tokens against an estimate of 100.
    for (let i = 0; i < 4; i++)
      await accept(post(key, { input: { steps: 3, tokensPerStep: 100 }, estimatedTokens: 100 }));
    // Failures after using tokens.
    for (let i = 0; i < 4; i++)
      await accept(post(key, { input: { steps: 3, tokensPerStep: 100, failAtStep: 2 } }));
    // Slow ones, cancelled while running or while still queued behind maxInFlight.
    const slow: string[] = [];
    for (let i = 0; i < 6; i++)
      slow.push(await accept(post(key, { input: { steps: 4, tokensPerStep: 50, stepMs: 800 } })));
    // Some slow ones are running (maxInFlight 4 keeps the others queued) when they are cancelled.
    await waitFor(
      () => Promise.all(slow.map((id) => s.call('GET', `/v1/runs/${id}`, { token: key }))),
      (vs) => vs.some((v) => v.body?.status === 'running'),
      60_000,
      100,
    );
    for (const id of slow)
      expect([202, 409]).toContain((await s.call('POST', `/v1/runs/${id}/cancel`, { token: key })).status);

    const runs: any[] = [];
    for (const id of ids) {
      const r = await waitFor(
        () => s.call('GET', `/v1/runs/${id}`, { token: key }),
        (v) => FINAL.includes(v.body?.status),
        90_000,
        300,
      );
      runs.push(r.body);
    }
    const count = (st: string) => runs.filter((r) => r.status === st).length;
    expect(count('failed')).toBe(4);
    expect(count('cancelled')).toBeGreaterThanOrEqual(1);
    expect(
      runs.filter((r) => r.status === 'failed').every((r) => r.error?.code === 'agent_step_failed'),
    ).toBe(true);
    const usage = runs.reduce((sum, r) => sum + (r.usage.tokens as number), 0);

    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (v) => v.body.inFlight === 0 && v.body.ledger.reserved === 0,
      20_000,
    );
    console.log(
      `ledger: spent ${me.body.ledger.spent}, sum of usage ${usage}, ${count('cancelled')} cancelled`,
    );
    // The ledger charges what the provider billed this tenant: every call, including the one a run
    // cancelled mid-step had already been served (so at least the runs' own usage).
    const bill = await fetch(`${s.simUrl}/admin/bill`).then((r) => r.json() as Promise<any>);
    const billed = bill.tenants[tenant] as number;
    expect(me.body.ledger.spent).toBe(billed);
    expect(billed).toBeGreaterThanOrEqual(usage);
    expect(me.body.ledger.reserved).toBe(0);
    expect(me.body.ledger.remaining).toBe(1_000_000 - billed);

    const entries = await s.call('GET', `/v1/admin/tenants/${tenant}/ledger?limit=200`);
    expect(entries.status).toBe(200);
    const kinds = new Set((entries.body.entries ?? entries.body).map((e: any) => e.kind));
    expect(kinds.has('reserve')).toBe(true);
    expect(kinds.has('settle')).toBe(true);

    // Durability: the balances are the same after 5+ continue-as-new cycles and a worker restart (each
    // cycle carries the ledger in the snapshot; the 100-cycle run is continue-as-new.test.ts).
    const before = (await s.call('GET', '/v1/admin/scheduler')).body.history.continuedAsNew as number;
    // The chain waits for its report pull (up to REPORT_PULL_WAIT_MS) before each continue-as-new.
    for (let i = 0; i < 2000; i++) {
      const st = await s.call('PATCH', '/v1/admin/scheduler', { body: { concurrency: 20 + (i % 2) } });
      expect(st.status).toBe(200);
      if (st.body.history.continuedAsNew >= before + 5) break;
    }
    expect((await s.call('GET', '/v1/admin/scheduler')).body.history.continuedAsNew).toBeGreaterThanOrEqual(
      before + 5,
    );
    await s.worker!.close();
    restarted = await startExtraWorker(s);
    const after = await s.call('GET', '/v1/tenants/me', { token: key });
    expect(after.body.ledger).toEqual(me.body.ledger);
  });

  it('race: 200 concurrent submissions against a budget that covers 50 admit exactly 50, billed 5,000', async () => {
    const tenant = `race-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 50, budget: { tokens: 5000, period: 'day' } });
    const replies = await Promise.all(
      Array.from({ length: 200 }, () => post(key, { input: { steps: 1, tokensPerStep: 100 } })),
    );
    const accepted = replies.filter((r) => r.status === 202);
    const shed = replies.filter((r) => r.status === 429);
    expect(accepted.length + shed.length).toBe(200);
    // The door sheds what the budget cannot cover (queued and reserved cost included) and admits
    // what it can: each run declares and uses 100 tokens, so 50 of them, whatever the interleaving.
    expect(accepted.length).toBeLessThanOrEqual(50);
    expect(accepted.length, 'runs the budget covers were refused').toBe(50);
    expect(
      shed.every(
        (r) => r.body.error.code === 'budget_exhausted' && Number(r.headers.get('retry-after')) >= 1,
      ),
    ).toBe(true);
    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (v) => v.body.inFlight === 0 && v.body.queued.total === 0 && v.body.ledger.reserved === 0,
      60_000,
    );
    // The provider's bill for this tenant (the simulator's own count of the tokens it served).
    const bill = (await (await fetch(`${s.simUrl!}/admin/bill`)).json()) as {
      tenants: Record<string, number>;
    };
    console.log(
      `race: ${accepted.length} accepted, ${shed.length} shed, spent ${me.body.ledger.spent}, billed ${bill.tenants[tenant]}`,
    );
    expect(me.body.ledger.spent).toBeLessThanOrEqual(5000);
    expect(me.body.ledger.spent).toBe(accepted.length * 100);
    expect(bill.tenants[tenant], 'the provider billed what the ledger spent').toBe(me.body.ledger.spent);
  });
});

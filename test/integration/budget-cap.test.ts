import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRunWorkflow } from '../../src/fleet/start-run';
import { workflowSource } from '../../src/fleet/worker';
import type { BudgetExhaustedMode } from '../../src/contract/fleet-port';
import { submitUpdate } from '../../src/contract/scheduler-messages';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FINAL = ['completed', 'failed', 'cancelled'];

/**
 * A budget is a cap even when the reservation at admission is wrong. The API never lets a client
 * lower a run's reservation below its agent's estimate (governor-faults.test.ts checks that door), so
 * these runs are started and offered the way a run accepted with a 1-token reservation is: straight
 * to Temporal and the scheduler, `estimatedTokens: 1`, each really using 2 × 500 tokens. Only the
 * per-step reservation stands between them and the budget: each step asks for a top-up before it
 * calls, and the provider's bill (the simulator's `/admin/bill`) must agree with the ledger.
 */
describe('per-step reservation: runs that under-declare cannot spend past the budget', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ MODEL_TPM: '1000000000', MODEL_RPM: '100000000', FLEET_CONCURRENCY: '20' });
  });
  afterAll(() => s?.close());

  const bill = async (tenant: string): Promise<number> => {
    const res = await fetch(`${s.simUrl!}/admin/bill`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { tenants: Record<string, number> }).tenants[tenant] ?? 0;
  };
  /** Starts `n` runs declaring 1 token that use 2 × 500, and offers them to the scheduler at cost 1. */
  const underDeclared = async (tenant: string, n: number, mode: BudgetExhaustedMode): Promise<string[]> => {
    const specs = Array.from({ length: n }, (_, i) => ({
      runId: `run-${tenant}-${String(i).padStart(20, '0')}`,
      tenant,
      agent: 'synthetic',
      priority: 'standard' as const,
      input: { steps: 2, tokensPerStep: 500 },
      estimatedTokens: 1,
      onBudgetExhausted: mode,
      createdAt: new Date().toISOString(),
    }));
    for (const spec of specs)
      expect(await startRunWorkflow(s.client, s.config.temporal.taskQueue, spec, s.config.runs)).toBe(
        'started',
      );
    const results = await s.client.workflow
      .getHandle(s.config.schedulerWorkflowId)
      .executeUpdate(submitUpdate, {
        args: [specs.map((x) => ({ runId: x.runId, tenant, priority: x.priority, cost: 1 }))],
      });
    expect(results.map((r) => r.accepted)).toEqual(specs.map(() => true));
    return specs.map((x) => x.runId);
  };
  const view = (key: string, id: string) => s.call('GET', `/v1/runs/${id}`, { token: key });
  const final = (key: string, id: string) =>
    waitFor(
      () => view(key, id),
      // A failed run's error comes from its own query; the Temporal-only fallback (used while a query
      // is refused, e.g. a busy workflow's query buffer) knows the status alone: ask again then.
      (v) => FINAL.includes(v.body?.status) && (v.body.status !== 'failed' || v.body.error !== null),
      180_000,
      300,
    ).then((r) => r.body);
  const settledLedger = (key: string, tenant: string) =>
    waitFor(
      async () => ({
        me: (await s.call('GET', '/v1/tenants/me', { token: key })).body,
        billed: await bill(tenant),
      }),
      (v) => v.me.ledger.reserved === 0 && v.me.ledger.spent === v.billed,
      // 10 s once in the suite (a recovery floor in flight): three times that and more.
      60_000,
    );

  it('fail: a budget of 5,000 and 20 runs declaring 1 token that use 1,000 each; at most 5 complete, the rest fail budget_exhausted, spent ≤ 5,000 = the bill', async () => {
    const tenant = `cap-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 20, budget: { tokens: 5000, period: 'day' } });
    const ids = await underDeclared(tenant, 20, 'fail');
    const runs = await Promise.all(ids.map((id) => final(key, id)));
    const completed = runs.filter((r) => r.status === 'completed');
    const failed = runs.filter((r) => r.status !== 'completed');
    for (const r of failed)
      expect(r).toMatchObject({ status: 'failed', error: { code: 'budget_exhausted' } });
    for (const r of completed) expect(r.usage.tokens).toBe(1000);
    const { me, billed } = await settledLedger(key, tenant);
    console.log(
      `per-step cap: ${completed.length} completed, ${failed.length} failed budget_exhausted, ` +
        `spent ${me.ledger.spent}, billed ${billed}`,
    );
    expect(completed.length).toBeLessThanOrEqual(5);
    expect(failed.length).toBeGreaterThanOrEqual(15);
    expect(billed).toBeGreaterThan(0);
    expect(billed).toBeLessThanOrEqual(5000);
    expect(me.ledger.spent).toBe(billed);
    expect(me.ledger.reserved).toBe(0);
    // Every billed token belongs to some run's usage: nothing was spent that no run knows of.
    expect(runs.reduce((a, r) => a + r.usage.tokens, 0)).toBe(billed);

    // The new path's histories (top-ups granted and refused) replay against today's code; with
    // FAIRWAY_RECORD_FIXTURES=1 one of each is kept as a replay fixture.
    const picks = [runs.find((r) => r.status === 'completed'), runs.find((r) => r.status === 'failed')];
    const histories = await Promise.all(
      picks.flatMap((r) =>
        r
          ? [
              s.client.workflow
                .getHandle(r.runId)
                .fetchHistory()
                .then((history) => ({ r, history })),
            ]
          : [],
      ),
    );
    // The suite's bundle, built by the global setup from the same workflows folder (bundling again here cost seconds of CPU).
    const replays = Worker.runReplayHistories(
      workflowSource(inject('workflowBundlePath')),
      histories.map(({ r, history }) => ({ workflowId: r.runId, history })),
    );
    for await (const replay of replays) expect(replay.error).toBeUndefined();
    if (process.env.FAIRWAY_RECORD_FIXTURES === '1')
      for (const { r, history } of histories)
        writeFileSync(
          path.join(__dirname, '..', 'fixtures', 'histories', `run-topup-${r.status}.pb`),
          temporal.api.history.v1.History.encode(history).finish(),
        );
  });

  it('park: runs the budget cannot cover wait (waitingOn budget) and finish when the budget is raised', async () => {
    const tenant = `park-${s.id}`;
    const key = await s.tenant(tenant, {
      maxInFlight: 20,
      budget: { tokens: 2000, period: 'none' },
      onBudgetExhausted: 'park',
    });
    const ids = await underDeclared(tenant, 4, 'park');
    // 4 × 1,000 against 2,000: every run gets at most its first step; then they park.
    const parked = await waitFor(
      () => Promise.all(ids.map((id) => view(key, id).then((r) => r.body))),
      (vs) => vs.some((v) => v.status === 'queued' && v.waitingOn?.code === 'budget'),
      120_000,
      300,
    );
    expect(parked.some((v) => v.status === 'queued' && v.waitingOn?.code === 'budget')).toBe(true);
    expect(parked.every((v) => v.status !== 'failed')).toBe(true);
    const before = await settledLedger(key, tenant);
    expect(before.billed).toBeLessThanOrEqual(2000);
    expect(before.me.ledger.spent).toBe(before.billed);

    const raised = await s.call('PUT', `/v1/admin/tenants/${tenant}`, {
      body: { budget: { tokens: 4000, period: 'none' } },
    });
    expect(raised.status).toBe(200);
    const runs = await Promise.all(ids.map((id) => final(key, id)));
    expect(runs.map((r) => r.status)).toEqual(ids.map(() => 'completed'));
    const { me, billed } = await settledLedger(key, tenant);
    console.log(`park: parked then all ${runs.length} completed, spent ${me.ledger.spent}, billed ${billed}`);
    expect(billed).toBe(4000);
    expect(me.ledger.spent).toBe(billed);
  });
});

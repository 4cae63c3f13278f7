import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentTaskQueue } from '../../src/agent';
import { stepWorstCase } from '../../src/contract/model-call';
import { submitUpdate } from '../../src/contract/scheduler-messages';
import { startRunWorkflow } from '../../src/fleet/start-run';
import { requestWorstCase } from '../../bench/lib/call-ledger';
import { modelLoadRequests } from '../support/agents/model-load';
import { startBundleWorker } from '../support/bundle-worker';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * A gateway that holds calls over the limit and then answers 200 (the simulator's hold) against
 * MODEL_CALL_TIMEOUT_SECONDS, scaled down: 10 s here against a 5 s hold. Held
 * for less than the timeout, a call, a short step's or a ctx.model one, completes once and is charged
 * exactly its bill; held for longer, the client gives up at 9 s, before Temporal's 10 s, and the call
 * is charged its worst case (never dropped as unbilled), whatever the gateway then does with it.
 *
 * The usage lookup is off (CHARGE_USAGE_LOOKUP=none): a cut call's worst case stands, so the ledger
 * equals the bill only when no call was cut. Leases last 3 s, less than any hold: no lease expires.
 */
const TIMEOUT_SECONDS = Number(process.env.MODEL_CALL_TIMEOUT_SECONDS_UNDER_TEST ?? 10);
const FAST = { tpm: 1_000_000_000, rpm: 100_000_000 };
const FINAL = ['completed', 'failed', 'cancelled'];

describe('a model call held by the gateway, against MODEL_CALL_TIMEOUT_SECONDS (real dev server)', () => {
  let s: TestStack;
  let agentWorker: Awaited<ReturnType<typeof startBundleWorker>> | undefined;
  let base: string;
  let seq = 0;

  beforeAll(async () => {
    s = await startTestStack({
      MODEL_CALL_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      MODEL_TPM: String(FAST.tpm),
      MODEL_RPM: String(FAST.rpm),
      CHARGE_USAGE_LOOKUP: 'none',
      // Shorter than the holds: a held call keeps its run's lease by renewing it meanwhile.
      LEASE_TTL_SECONDS: '3',
    });
    // The tokenizer loads once, for seconds: before any 3 s lease, so what a lease sees is the hold.
    modelLoadRequests({ seed: 0, calls: 2 }).forEach(requestWorstCase);
    base = `${s.config.temporal.taskQueue}-user`;
    agentWorker = await startBundleWorker(
      s,
      path.join(__dirname, '..', 'support', 'agents', 'model-load-workflows.ts'),
      agentTaskQueue(base, 'model-load'),
    );
  }, 180_000);
  afterAll(async () => {
    await agentWorker?.close();
    await s?.close();
  });

  const sim = async (route: string, body?: unknown): Promise<any> => {
    const r = await fetch(`${s.simUrl!}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    expect(r.status, route).toBe(200);
    return r.json();
  };
  const billOf = async (tenant: string): Promise<number> => (await sim('/admin/bill')).tenants[tenant] ?? 0;
  /**
   * The next `calls` calls are held `holdMs` and then served: the quota is all but gone while they
   * arrive, so each waits out its whole hold, and back before any hold ends. Returns when the last
   * hold ends at the latest.
   */
  const holdNext = async (calls: number, holdMs: number, send: () => Promise<void>): Promise<number> => {
    const before = (await sim('/admin/stats')).held as number;
    await sim('/admin/hold', { ms: holdMs });
    await sim('/admin/capacity', { tpm: 1 });
    await send();
    await waitFor(
      () => sim('/admin/stats'),
      (st) => st.held - before >= calls,
      30_000,
      50,
    );
    await sim('/admin/capacity', FAST);
    return Date.now() + holdMs;
  };
  /** Waits until the gateway has decided every held call (a cut one: its caller gone, nothing served). */
  const afterHolds = async (until: number) => {
    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now()) + 200));
  };
  const finished = (key: string, runId: string) =>
    waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }).then((r) => r.body),
      (v) => FINAL.includes(v?.status),
      90_000,
      200,
    );
  const spentOf = async (key: string) =>
    (
      await waitFor(
        () => s.call('GET', '/v1/tenants/me', { token: key }),
        (v) => v.body.inFlight === 0 && v.body.ledger.reserved === 0,
        30_000,
      )
    ).body.ledger.spent as number;
  const expectNoStepServedTwice = () => {
    const calls = s.sim!.state.calls.summary();
    expect(calls.stepsServedTwice, `steps served twice: ${calls.sample.stepsServedTwice.join(', ')}`).toBe(0);
  };
  const leasesExpired = async () =>
    (await s.call('GET', '/v1/admin/scheduler')).body.counters.expired as number;
  let expiredBefore = 0;
  beforeEach(async () => {
    expiredBefore = await leasesExpired();
  });
  afterEach(async () => {
    expect(await leasesExpired(), 'leases expired while their calls were held').toBe(expiredBefore);
  });

  /** Starts a model-load run (its ctx.model calls only) on the agent's own queue, as the API does. */
  const startModelLoad = async (tenant: string, input: { seed: number; calls: number }) => {
    const runId = `run-${tenant}-${String(++seq).padStart(20, '0')}`;
    const spec = {
      runId,
      tenant,
      agent: 'model-load',
      priority: 'standard' as const,
      input,
      estimatedTokens: 100,
      createdAt: new Date().toISOString(),
    };
    expect(await startRunWorkflow(s.client, base, spec, s.config.runs)).toBe('started');
    const [r] = await s.client.workflow.getHandle(s.config.schedulerWorkflowId).executeUpdate(submitUpdate, {
      args: [[{ runId, tenant, priority: 'standard', cost: spec.estimatedTokens }]],
    });
    expect(r).toMatchObject({ accepted: true });
    return runId;
  };

  it('short steps held 5 s complete once, each charged exactly its bill', async () => {
    const tenant = `held-steps-${s.id}`;
    const key = await s.tenant(tenant);
    const ids: string[] = [];
    const started = Date.now();
    await holdNext(3, 5_000, async () => {
      for (let i = 0; i < 3; i++) {
        const r = await s.call('POST', '/v1/runs', {
          token: key,
          body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 100 } },
        });
        expect(r.status).toBe(202);
        ids.push(r.body.runId as string);
      }
    });
    const runs = await Promise.all(ids.map((id) => finished(key, id)));
    for (const r of runs)
      expect(r, JSON.stringify(r.error)).toMatchObject({ status: 'completed', usage: { tokens: 200 } });
    expect(await billOf(tenant)).toBe(600);
    expect(await spentOf(key)).toBe(600);
    expectNoStepServedTwice();
    expect(Date.now() - started, 'the calls were held').toBeGreaterThanOrEqual(5_000);
  });

  it('ctx.model calls held 5 s complete once, each charged exactly its bill', async () => {
    const tenant = `held-model-${s.id}`;
    const key = await s.tenant(tenant);
    const ids: string[] = [];
    await holdNext(2, 5_000, async () => {
      for (const seed of [11, 12]) ids.push(await startModelLoad(tenant, { seed, calls: 2 }));
    });
    const runs = await Promise.all(ids.map((id) => finished(key, id)));
    for (const r of runs) expect(r.status, JSON.stringify(r.error)).toBe('completed');
    const bill = await billOf(tenant);
    expect(bill).toBeGreaterThan(0);
    expect(await spentOf(key)).toBe(bill);
    expect(runs.reduce((sum, r) => sum + (r.usage.tokens as number), 0)).toBe(bill);
    expectNoStepServedTwice();
  });

  it('a short step held past the timeout is given up on before Temporal times it out, and charged its worst case', async () => {
    const tenant = `cut-step-${s.id}`;
    const key = await s.tenant(tenant);
    let runId = '';
    const holdsEnd = await holdNext(1, (TIMEOUT_SECONDS + 4) * 1000, async () => {
      const r = await s.call('POST', '/v1/runs', {
        token: key,
        body: { agent: 'synthetic', input: { steps: 1, tokensPerStep: 100 } },
      });
      expect(r.status).toBe(202);
      runId = r.body.runId as string;
    });
    const run = await finished(key, runId);
    // The gateway never served it (its caller was gone when the hold ended); its outcome was unknown
    // to the run, which is charged the worst case (a synthetic step's is its tokens) and does not call again.
    const worst = stepWorstCase(runId, 1, 100);
    expect(run, JSON.stringify(run.error)).toMatchObject({ status: 'completed', usage: { tokens: worst } });
    expect(await spentOf(key)).toBe(worst);
    await afterHolds(holdsEnd);
    expect(await billOf(tenant)).toBe(0);
    expectNoStepServedTwice();
  });

  it('a ctx.model call held past the timeout is charged its worst case and tried again once', async () => {
    const tenant = `cut-model-${s.id}`;
    const key = await s.tenant(tenant);
    const input = { seed: 21, calls: 1 };
    let runId = '';
    const holdsEnd = await holdNext(1, (TIMEOUT_SECONDS + 4) * 1000, async () => {
      runId = await startModelLoad(tenant, input);
    });
    const run = await finished(key, runId);
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    await afterHolds(holdsEnd);
    const bill = await billOf(tenant);
    const worst = requestWorstCase(modelLoadRequests(input)[0]!);
    // The cut attempt at its worst case, and the retry, served once (after the quota came back), at its bill.
    expect(bill).toBeGreaterThan(0);
    expect(await spentOf(key)).toBe(worst + bill);
    expect(run.usage.tokens).toBe(worst + bill);
    expectNoStepServedTwice();
  });
});

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentTaskQueue } from '../../src/agent';
import { workflowSource } from '../../src/fleet/worker';
import { terminateScheduler } from '../../bench/lib/scheduler-loss';
import { cutSurplus, requestWorstCase, worstCasesByKey } from '../../bench/lib/call-ledger';
import { modelLoadRequests, ModelLoadInputSchema } from '../support/agents/model-load';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';
import { workerEnv } from '../support/worker-env';

/**
 * A SIGKILLed worker's uncharged calls are charged by another worker within seconds, provisionally
 * at their worst case, and settled against the simulator's usage endpoint seconds later.
 */
const CHARGE_SWEEP = {
  CHARGE_OWNER_DEAD_SECONDS: '5',
  CHARGE_SWEEP_SECONDS: '1',
  CHARGE_USAGE_LOOKUP: 'openai-stored',
  CHARGE_RECONCILE_SECONDS: '1',
  CHARGE_RECONCILE_AFTER_SECONDS: '3',
  // Longer than the pause case's stall: a stopped worker's unsent calls are not refunded before it
  // resumes and sends them (their worst case stands meanwhile, so spent + reserved ≤ budget).
  CHARGE_RECONCILE_TAKEN_AFTER_SECONDS: '45',
};
const root = path.join(__dirname, '..', '..');
/** A fault injected mid-call leaves the call's answer at least this long to go (its delay is 1.5 s). */
const MID_CALL_MARGIN_MS = 700;
const MODULE = path.join(root, 'test', 'support', 'agents', 'model-load.ts');
const FINAL = ['completed', 'failed', 'cancelled'];
/**
 * The chaos case's faults (MODEL_LEDGER_FAULTS): `kill` (the worker SIGKILLed mid-call) by default;
 * `terminate` (the scheduler terminated once) and `both` with MODEL_LEDGER_CHAOS=1.
 */
const FAULTS = process.env.MODEL_LEDGER_CHAOS === '1' ? (process.env.MODEL_LEDGER_FAULTS ?? 'both') : 'kill';

/**
 * ctx.model calls of a user's agent (test/support/agents/model-load.ts: prompts of 50 to 3,000
 * characters and maxTokens of 16 to 512, drawn per run from its seed), served by `fairway worker`
 * in its own process: the tenant's `spent` never passes its budget while they run, and once they
 * end the ledger's `spent` is the simulator's bill for that tenant exactly, also across a worker
 * stopped (SIGSTOP) past its leases' TTL and its owner's death, a worker SIGKILLed while calls are in
 * flight and a scheduler terminated once.
 */
/** Every run that did not complete failed for want of budget, not for another reason. */
function expectEndedByBudget(runs: { status: string; error?: unknown }[]): void {
  for (const r of runs.filter((x) => x.status !== 'completed'))
    expect(r, JSON.stringify(r.error)).toMatchObject({
      status: 'failed',
      error: { code: 'budget_exhausted' },
    });
}

describe('ctx.model calls of a user agent keep spent ≤ budget and ledger = bill', () => {
  let s: TestStack;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    s = await startTestStack({
      AGENTS: MODULE,
      FLEET_CONCURRENCY: '16',
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
      LEASE_TTL_SECONDS: '10',
      SCHEDULER_WATCHDOG_SECONDS: '2',
      ...CHARGE_SWEEP,
    });
  }, 120_000);
  /** Replays the scheduler's history against the suite's bundle (kept in a file for a reproduction); its error. */
  const schedulerReplay = async (): Promise<string | undefined> => {
    const handle = s.client.workflow.getHandle(s.config.schedulerWorkflowId);
    const history = await handle.fetchHistory();
    const file = path.join(os.tmpdir(), `scheduler-${s.id}-${Date.now()}.pb`);
    writeFileSync(file, temporal.api.history.v1.History.encode(history).finish());
    try {
      await Worker.runReplayHistory(
        { ...workflowSource(inject('workflowBundlePath')), replayName: 'scheduler' },
        history,
        s.config.schedulerWorkflowId,
      );
      return undefined;
    } catch (err) {
      return `${String(err)} (history in ${file})`;
    }
  };
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    if (s) console.log(`scheduler replay at the end: ${(await schedulerReplay().catch(String)) ?? 'ok'}`);
    await s?.close();
  });

  /** `fairway worker --agents model-load.ts` in its own process, resolved once it serves. */
  async function worker(): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [path.join(root, 'bin', 'fairway.cjs'), 'worker', '--agents', MODULE],
      {
        env: workerEnv(s, CHARGE_SWEEP),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('fairway worker: serving')) resolve();
      });
      child.stderr!.on('data', (d: Buffer) => void (output += d.toString()));
      child.once('exit', (code) => reject(new Error(`fairway worker exited ${code}: ${output}`)));
    });
    expect(output).toContain(agentTaskQueue(s.config.temporal.taskQueue, 'model-load'));
    return child;
  }
  const kill = async (child: ChildProcess) => {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  };

  const bill = async (tenant: string): Promise<number> => {
    const res = await fetch(`${s.simUrl!}/admin/bill`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { tenants: Record<string, number> }).tenants[tenant] ?? 0;
  };
  /** The tenant's ledger; undefined while the API cannot read it (a busy scheduler answers 503). */
  const ledgerNow = async (key: string) => {
    const r = await s.call('GET', '/v1/tenants/me', { token: key }).catch(() => undefined);
    if (!r) return undefined;
    return r.status === 200 ? (r.body.ledger as { spent: number; reserved: number }) : undefined;
  };
  const ledger = async (key: string) =>
    waitFor(
      () => ledgerNow(key),
      (l) => l !== undefined,
      30_000,
      200,
    ).then((l) => l!);
  /** Polls the tenant's ledger every 50 ms until `stop` resolves; returns every observation. */
  const observe = (key: string, stop: Promise<unknown>) => {
    const seen: { spent: number; reserved: number }[] = [];
    let done = false;
    void stop.finally(() => (done = true));
    const loop = (async () => {
      while (!done) {
        const l = await ledgerNow(key);
        if (l) seen.push({ spent: l.spent, reserved: l.reserved });
        await new Promise((r) => setTimeout(r, 50));
      }
      return seen;
    })();
    return loop;
  };
  const submit = async (key: string, seeds: number[], calls: number): Promise<string[]> =>
    Promise.all(
      seeds.map(async (seed) => {
        const r = await s.call('POST', '/v1/runs', {
          token: key,
          body: { agent: 'model-load', input: { seed, calls } },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        return r.body.runId as string;
      }),
    );
  const finals = (key: string, ids: string[]) =>
    Promise.all(
      ids.map((id) =>
        waitFor(
          // A refused connection under load is read again.
          () => s.call('GET', `/v1/runs/${id}`, { token: key }).catch(() => ({ status: 0, body: null })),
          (v) => FINAL.includes(v.body?.status) && (v.body.status !== 'failed' || v.body.error !== null),
          180_000,
          500,
        ).then((r) => r.body),
      ),
    );
  const settled = (key: string, tenant: string) =>
    waitFor(
      async () => ({ me: await ledger(key), billed: await bill(tenant) }),
      (v) => v.me.reserved === 0 && v.me.spent === v.billed,
      60_000,
    );
  /** Each call's worst case, as the tokenizer counts it (prompt bound plus maxTokens), per run. */
  const worstCases = (seeds: number[], calls: number): number[][] =>
    seeds.map((seed) => modelLoadRequests(ModelLoadInputSchema.parse({ seed, calls })).map(requestWorstCase));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  /**
   * Waits for a call billed to `tenant` whose answer leaves the simulator no sooner than
   * MID_CALL_MARGIN_MS from now, then injects `fault` in the same tick: the fault lands mid-call,
   * with time for the simulator to see the connection go before the answer is due.
   */
  const midCall = async (tenant: string, fault: () => void) => {
    const state = s.sim!.state;
    const until = Date.now() + 120_000;
    // Looks and acts without yielding in between; looks again every 5 ms.
    while (state.unansweredOf(tenant, MID_CALL_MARGIN_MS) === 0) {
      if (Date.now() > until) {
        const counters = (await s.call('GET', '/v1/admin/scheduler').catch(() => undefined))?.body?.counters;
        throw new Error(
          `no call of ${tenant} in flight within 120 s: billed ${state.billOf(tenant)}, counters ${JSON.stringify(counters)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    fault();
  };
  /** Makes the simulator answer every served call `ms` after billing it; returns what undoes it. */
  const answerLate = (ms: number) => {
    const state = s.sim!.state;
    const decide = state.decide.bind(state);
    state.decide = ((...args: Parameters<typeof decide>) => {
      const d = decide(...args);
      return d.kind === 'ok' ? { ...d, delayMs: d.delayMs + ms } : d;
    }) as typeof state.decide;
    return () => void (state.decide = decide);
  };

  it('budget: 24 runs whose calls total far more than a 12,000-token budget; spent ≤ budget throughout, = the bill', async () => {
    const child = await worker();
    const tenant = `mbudget-${s.id}`;
    const BUDGET = 12_000;
    const key = await s.tenant(tenant, { maxInFlight: 24, budget: { tokens: BUDGET, period: 'none' } });
    const seeds = Array.from({ length: 24 }, (_, i) => 1000 + i);
    const worst = worstCases(seeds, 4);
    const rough = sum(worst.map(sum));
    // The reservations differ call to call: the tokenizer's count, not a fixed size, decides them.
    expect(new Set(worst.flat()).size).toBeGreaterThan(worst.flat().length / 2);
    expect(rough).toBeGreaterThan(4 * BUDGET);
    const ids = await submit(key, seeds, 4);
    const ended = finals(key, ids);
    const seen = await observe(key, ended);
    const runs = await ended;
    const sched = await s.client.workflow.getHandle(s.config.schedulerWorkflowId).describe();
    console.log(
      `scheduler ${sched.runId}; a run ${(await s.client.workflow.getHandle(ids[0]!).describe()).runId}`,
    );
    const { me, billed } = await settled(key, tenant);
    const completed = runs.filter((r) => r.status === 'completed');
    expectEndedByBudget(runs);
    console.log(
      `model-load budget: ${completed.length}/${runs.length} completed, worst cases ${rough}, ` +
        `budget ${BUDGET}, ${seen.length} observations, max spent ${Math.max(...seen.map((v) => v.spent))}, max spent+reserved ${Math.max(...seen.map((v) => v.spent + v.reserved))}, spent ${me.spent}, billed ${billed}`,
    );
    // The budget, not the work, ended them: most of it was spent, and some runs were refused their next call.
    expect(completed.length).toBeLessThan(runs.length);
    expect(billed).toBeGreaterThan(BUDGET / 2);
    expect(seen.length).toBeGreaterThan(5);
    // Observed while calls were reserved: neither spent nor spent with what is reserved passed the budget.
    expect(seen.some((v) => v.reserved > 0)).toBe(true);
    for (const v of seen) expect(v.spent).toBeLessThanOrEqual(BUDGET);
    for (const v of seen) expect(v.spent + v.reserved).toBeLessThanOrEqual(BUDGET);
    expect(billed).toBeGreaterThan(0);
    expect(billed).toBeLessThanOrEqual(BUDGET);
    expect(me.spent).toBe(billed);
    // What each completed run was charged is what the provider reported for its calls.
    for (const r of completed)
      expect(r.usage.tokens).toBe((r.result.tokens as number[]).reduce((a, b) => a + b, 0));
    await kill(child);
  }, 240_000);

  it("pause: the worker stopped past its leases' TTL mid-call; spent + reserved ≤ budget throughout, = the bill", async () => {
    // Every call is answered 1.5 s after it is billed: a stop lands while calls are in flight.
    const state = s.sim!.state;
    const restore = answerLate(1500);
    try {
      const child = await worker();
      const tenant = `mpause-${s.id}`;
      const BUDGET = 12_000;
      const key = await s.tenant(tenant, { maxInFlight: 16, budget: { tokens: BUDGET, period: 'none' } });
      const seeds = Array.from({ length: 16 }, (_, i) => 3000 + i);
      const ids = await submit(key, seeds, 4);
      const ended = finals(key, ids);
      const seen = observe(key, ended);
      const expiredBefore = ((await s.call('GET', '/v1/admin/scheduler')).body?.counters?.expired ??
        0) as number;
      // Stopped (not killed) mid-call past LEASE_TTL_SECONDS: its leases expire while its calls are answered.
      await midCall(tenant, () => child.kill('SIGSTOP'));
      await waitFor(
        async () => ((await s.call('GET', '/v1/admin/scheduler')).body?.counters?.expired ?? 0) as number,
        (n) => n > expiredBefore,
        180_000,
        200,
      );
      await new Promise((r) => setTimeout(r, 3000));
      child.kill('SIGCONT');
      const runs = await ended;
      const observed = await seen;
      const read = async () => ({ me: await ledger(key), billed: await bill(tenant) });
      const { me, billed } = await settled(key, tenant).catch(read);
      console.log(
        `model-load pause: ${runs.filter((r) => r.status === 'completed').length}/${runs.length} completed, budget ${BUDGET}, ` +
          `max spent ${Math.max(...observed.map((v) => v.spent))}, max spent+reserved ${Math.max(...observed.map((v) => v.spent + v.reserved))}, ` +
          `spent ${me.spent}, billed ${billed}, served twice ${JSON.stringify(state.calls.summary())}, ` +
          `counters ${JSON.stringify((await s.call('GET', '/v1/admin/scheduler')).body?.counters)}`,
      );
      expectEndedByBudget(runs);
      expect(observed.length).toBeGreaterThan(5);
      for (const v of observed) expect(v.spent + v.reserved).toBeLessThanOrEqual(BUDGET);
      expect(billed).toBeLessThanOrEqual(BUDGET);
      expect(me.spent).toBe(billed);
      await kill(child);
    } finally {
      restore();
    }
  }, 240_000);

  it('accept-and-drop: calls dropped before and after the provider served them are retried; spent ≤ budget throughout, = the bill', async () => {
    const child = await worker();
    const tenant = `mdrop-${s.id}`;
    const BUDGET = 20_000;
    const key = await s.tenant(tenant, { maxInFlight: 8, budget: { tokens: BUDGET, period: 'none' } });
    const drops = async (calls: number, when: 'before' | 'after') => {
      const r = await fetch(`${s.simUrl!}/admin/drops`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ calls, when }),
      });
      expect(r.status).toBe(200);
    };
    const dropped = async () => s.sim!.state.stats().dropped;
    const before = await dropped();
    // A gateway restarting: connections accepted and closed before anything is served...
    await drops(12, 'before');
    const seeds = Array.from({ length: 8 }, (_, i) => 7000 + i);
    const ids = await submit(key, seeds, 3);
    const ended = finals(key, ids);
    const seen = observe(key, ended);
    await waitFor(dropped, (n) => n >= before + 12, 60_000, 100);
    // ...then answers lost after the provider served (and billed) them.
    await drops(6, 'after');
    await waitFor(dropped, (n) => n >= before + 18, 60_000, 100);
    const runs = await ended;
    const observed = await seen;
    const { me, billed } = await settled(key, tenant);
    const cut = s.sim!.state.stats().cut[tenant] ?? { calls: 0, tokens: 0, keys: [] };
    console.log(
      `model-load accept-and-drop: ${runs.filter((r) => r.status === 'completed').length}/${runs.length} completed, ` +
        `${(await dropped()) - before} calls dropped (${cut.calls} of them after being billed), budget ${BUDGET}, ` +
        `max spent ${Math.max(...observed.map((v) => v.spent))}, max spent+reserved ${Math.max(...observed.map((v) => v.spent + v.reserved))}, ` +
        `spent ${me.spent}, billed ${billed}`,
    );
    expectEndedByBudget(runs);
    expect(cut.calls).toBeGreaterThan(0);
    expect(observed.length).toBeGreaterThan(5);
    for (const v of observed) expect(v.spent + v.reserved).toBeLessThanOrEqual(BUDGET);
    expect(me.reserved).toBe(0);
    expect(me.spent).toBe(billed);
    await kill(child);
  }, 240_000);

  it('chaos: the worker SIGKILLed mid-call; spent ≤ budget throughout, = the bill once provisional charges are reconciled', async () => {
    // Every call is answered 1.5 s after it is billed: a kill lands between a call's start and its end.
    const state = s.sim!.state;
    const restore = answerLate(1500);
    try {
      let child = await worker();
      const tenant = `mchaos-${s.id}`;
      const BUDGET = 16_000;
      const key = await waitFor(
        () =>
          s.tenant(tenant, { maxInFlight: 16, budget: { tokens: BUDGET, period: 'none' } }).catch(() => ''),
        (k) => k !== '',
        30_000,
        500,
      );
      const seeds = Array.from({ length: 16 }, (_, i) => 5000 + i);
      const worst = worstCases(seeds, 3);
      // The budget binds: the runs' calls may cost more than it holds.
      expect(sum(worst.map(sum))).toBeGreaterThan(BUDGET);
      const ids = await submit(key, seeds, 3);
      /** A call's worst case by its call key (`<runId>:<step>`, steps from 1). */
      const worstOf = worstCasesByKey(ids, worst);
      const ended = finals(key, ids);
      const seen = observe(key, ended);
      // Calls billed and not yet answered: the kill cuts them.
      let billedAtKill = 0;
      const killed = child;
      await midCall(tenant, () => {
        billedAtKill = state.billOf(tenant);
        if (FAULTS !== 'terminate') killed.kill('SIGKILL');
      });
      if (FAULTS !== 'terminate') await kill(killed);
      const described = await s.client.workflow.getHandle(s.config.schedulerWorkflowId).describe();
      if (FAULTS !== 'kill')
        await terminateScheduler(inject('temporalAddress'), s.config.schedulerWorkflowId, described.runId);
      if (FAULTS !== 'terminate') child = await worker();
      const runs = await ended;
      const observed = await seen;
      /** Calls the kill cut: billed by the provider, their answer never read (charged provisionally). */
      const cutCalls = () => state.stats().cut[tenant] ?? { calls: 0, tokens: 0, keys: [] };
      const surplus = () => cutSurplus(cutCalls(), (k) => worstOf.get(k));
      // Read once settled (each cut call's provisional worst case corrected to its bill), or as it
      // stands after the wait (the assertions below then say what differs).
      const read = async () => ({ me: await ledger(key), billed: await bill(tenant) });
      const { me, billed } = await waitFor(
        read,
        (v) => v.me.reserved === 0 && v.me.spent === v.billed,
        60_000,
      ).catch(read);
      const counters = (await s.call('GET', '/v1/admin/scheduler')).body?.counters as
        Record<string, number> | undefined;
      const used = runs.reduce((a, r) => a + (r.usage?.tokens ?? 0), 0);
      const completed = runs.filter((r) => r.status === 'completed');
      expectEndedByBudget(runs);
      console.log(
        `model-load chaos: ${completed.length}/${runs.length} completed, budget ${BUDGET}, billed ${billedAtKill} at the kill, ` +
          `${observed.length} observations, max spent ${Math.max(...observed.map((v) => v.spent))}, max spent+reserved ${Math.max(...observed.map((v) => v.spent + v.reserved))}, spent ${me.spent}, billed ${billed}, ` +
          `cut calls ${cutCalls().calls} (billed ${cutCalls().tokens}, worst-case surplus ${surplus()}), runs' usage ${used}, ` +
          `faults ${FAULTS}, steps served twice ${state.calls.summary().stepsServedTwice}, ` +
          `scheduler adopted ${counters?.adopted} expired ${counters?.expired}`,
      );
      expect(billedAtKill).toBeGreaterThan(0);
      expect(observed.length).toBeGreaterThan(5);
      for (const v of observed) expect(v.spent).toBeLessThanOrEqual(BUDGET);
      for (const v of observed) expect(v.spent + v.reserved).toBeLessThanOrEqual(BUDGET);
      expect(billed).toBeLessThanOrEqual(BUDGET);
      expect(me.reserved).toBe(0);
      if (FAULTS !== 'terminate') expect(cutCalls().calls).toBeGreaterThan(0);
      // The cut calls were charged more than their bill at first (their worst case)...
      if (FAULTS !== 'terminate') expect(surplus()).toBeGreaterThan(0);
      // ...and the ledger is the bill exactly: each provisional charge settled against the
      // provider's report, no delivered charge booked twice (src/activities/call-charges.ts).
      expect(me.spent).toBe(billed);
      await kill(child);
    } finally {
      restore();
    }
  }, 300_000);
});

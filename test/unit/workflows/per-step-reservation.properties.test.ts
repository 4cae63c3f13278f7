import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Charge, FleetScheduler } from '../../../src/scheduler';
import { RunState } from '../../../src/workflows/run-state';
import { LINGER_LEASE_TTLS } from '../../../src/scheduler/lingers';
import { T0, makeFleet } from '../scheduler/helpers';

/**
 * The run workflow's per-step reservation against the real policy core: runs whose declared estimate
 * says nothing of what they use start steps (several at once), each reserving its worst case through
 * `RunState.uncovered` and a top-up before it calls; steps finish later and are billed at most their
 * worst case; leases expire under running steps (their calls arrive late), and a retried call is
 * billed again without a reservation of its own. Checked after every operation: the ledger equals
 * the provider's bill once charges are flushed, and `spent` exceeds the budget by no more than the
 * documented bound (docs/design.md): the worst cases of the steps under way when their lease expired
 * (their lingering reservation may have ended before they were charged), plus the retried calls the
 * provider billed twice.
 */
const TENANTS = ['a', 'b'] as const;
const TTL_MS = 1000;

type Op =
  | { k: 'submit'; tenant: number; estimate: number }
  | { k: 'admit' }
  | { k: 'start'; run: number; worst: number; share: number }
  | { k: 'finish'; step: number; retried: boolean }
  | { k: 'flush' }
  | { k: 'release'; run: number }
  | { k: 'expire' };

const opArb = (retries: boolean, expiries: boolean): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant('submit' as const),
        tenant: fc.nat(1),
        estimate: fc.integer({ min: 1, max: 300 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('admit' as const) }) },
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('start' as const),
        run: fc.nat(12),
        worst: fc.integer({ min: 1, max: 600 }),
        share: fc.double({ min: 0.5, max: 1, noNaN: true }),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('finish' as const),
        step: fc.nat(6),
        retried: retries ? fc.boolean() : fc.constant(false),
      }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('flush' as const) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('release' as const), run: fc.nat(12) }) },
    ...(expiries ? [{ weight: 3, arbitrary: fc.record({ k: fc.constant('expire' as const) }) }] : []),
  );

interface Run {
  id: string;
  tenant: string;
  st: RunState;
  /** Steps of this run under way. */
  steps: number;
  done: boolean;
}

interface Step {
  run: Run;
  attempt: number;
  worst: number;
  /** What the provider bills for it: at most its worst case. */
  bill: number;
}

class World {
  now = T0;
  readonly runs: Run[] = [];
  readonly steps: Step[] = [];
  readonly bill = new Map<string, number>();
  /** Per tenant: what the documented bound lets `spent` exceed the budget by. */
  readonly slack = new Map<string, number>();
  private pending: Charge[] = [];

  constructor(readonly s: FleetScheduler) {}

  private add(m: Map<string, number>, t: string, n: number): void {
    m.set(t, (m.get(t) ?? 0) + n);
  }

  private requeue(r: Run, atLeast: number): void {
    r.st.requeue();
    const cost = Math.max(atLeast, r.st.spec.estimatedTokens - r.st.usage, 1);
    r.st.offeredCost = cost;
    this.s.submit(
      [{ runId: r.id, tenant: r.tenant, priority: 'standard', cost, attempt: r.st.attempt }],
      this.now,
    );
  }

  private end(r: Run, outcome: 'completed' | 'failed'): void {
    this.flush();
    const st = r.st;
    if (st.admission)
      this.s.release(
        [
          {
            runId: r.id,
            attempt: st.attempt,
            usedTokens: st.attemptUsage,
            outcome,
            perCall: true,
            tenant: r.tenant,
          },
        ],
        this.now,
      );
    else this.s.cancel([r.id], this.now);
    st.admission = null;
    r.done = true;
  }

  apply(op: Op): void {
    const s = this.s;
    if (op.k === 'submit') {
      const id = `r${this.runs.length}`;
      const tenant = TENANTS[op.tenant]!;
      const [res] = s.submit([{ runId: id, tenant, priority: 'standard', cost: op.estimate }], this.now);
      if (!res?.accepted) return;
      const spec = {
        runId: id,
        tenant,
        agent: 'synthetic',
        priority: 'standard' as const,
        input: {},
        estimatedTokens: op.estimate,
        createdAt: new Date(this.now).toISOString(),
      };
      this.runs.push({ id, tenant, st: new RunState(spec), steps: 0, done: false });
    } else if (op.k === 'admit') {
      for (const a of s.admit(this.now)) {
        const r = this.runs.find((x) => x.id === a.runId)!;
        r.st.admit({
          attempt: a.attempt,
          seq: a.seq,
          admittedAt: a.admittedAt,
          leaseExpiresAt: a.leaseExpiresAt,
          reserved: a.reserved,
        });
        expect(r.st.admission).not.toBeNull();
      }
    } else if (op.k === 'start') {
      // run.ts `cover`: queue again when revoked; top up what the reservation does not cover.
      const r = this.runs[op.run];
      if (!r || r.done || !r.st.admission) return;
      const st = r.st;
      if (st.revoked) return this.requeue(r, op.worst + st.stepsWorst);
      const need = st.uncovered + op.worst;
      if (need > 0) {
        const t = s.topUp(r.id, st.attempt, need, this.now);
        if (!t.granted && t.code === 'no_lease') return void (st.revoked = true);
        if (!t.granted) {
          if (r.steps === 0) this.end(r, 'failed'); // budget_exhausted (steps under way finish first)
          return;
        }
        st.reserved += need;
      }
      st.stepsWorst += op.worst;
      r.steps++;
      this.steps.push({ run: r, attempt: st.attempt, worst: op.worst, bill: Math.ceil(op.worst * op.share) });
    } else if (op.k === 'finish') {
      const step = this.steps[op.step];
      if (!step) return;
      this.steps.splice(op.step, 1);
      const r = step.run;
      const calls = op.retried ? 2 : 1; // a retried call is billed again, unreserved
      for (let i = 0; i < calls; i++) {
        this.add(this.bill, r.tenant, step.bill);
        this.pending.push({ tenant: r.tenant, runId: r.id, attempt: step.attempt, tokens: step.bill });
      }
      if (op.retried) this.add(this.slack, r.tenant, step.bill);
      r.st.used(step.bill);
      r.st.stepsWorst -= step.worst;
      r.steps--;
    } else if (op.k === 'flush') {
      this.flush();
    } else if (op.k === 'release') {
      const r = this.runs[op.run];
      if (!r || r.done || r.steps > 0 || !r.st.admission) return;
      this.end(r, 'completed');
    } else {
      this.now += TTL_MS;
      for (const a of s.expireLeases(this.now)) {
        const r = this.runs.find((x) => x.id === a.runId)!;
        r.st.revoke(a.attempt);
        // The bound: the steps under way when the lease expired may still be billed, late.
        for (const st of this.steps)
          if (st.run === r && st.attempt === a.attempt) this.add(this.slack, r.tenant, st.worst);
      }
    }
  }

  flush(): void {
    this.s.charge(this.pending, this.now);
    this.pending = [];
  }
}

const budgetsArb = fc.record({
  a: fc.integer({ min: 100, max: 4000 }),
  b: fc.integer({ min: 100, max: 4000 }),
});

function world(budgets: Record<string, number>): World {
  return new World(
    makeFleet({
      settings: { concurrency: 8, leaseTtlSeconds: TTL_MS / 1000 },
      tenants: Object.fromEntries(
        TENANTS.map((t) => [
          t,
          { maxInFlight: 4, maxQueued: 1000, budget: { tokens: budgets[t]!, period: 'none' } },
        ]),
      ),
    }),
  );
}

function check(budgets: Record<string, number>, ops: Op[], strict: boolean): void {
  const w = world(budgets);
  for (const op of ops) {
    w.apply(op);
    for (const t of TENANTS) {
      const l = w.s.tenantStatus(t, w.now)!.ledger;
      const slack = w.slack.get(t) ?? 0;
      if (strict) expect(l.spent + l.reserved).toBeLessThanOrEqual(budgets[t]!);
      expect(l.spent).toBeLessThanOrEqual(budgets[t]! + slack);
      expect(l.reserved).toBeGreaterThanOrEqual(0);
    }
  }
  // Every step finishes, every run ends, the lingers of expired leases end: the ledger holds nothing
  // and equals the bill.
  while (w.steps.length > 0) w.apply({ k: 'finish', step: 0, retried: false });
  for (const r of w.runs) if (!r.done) w.apply({ k: 'release', run: w.runs.indexOf(r) });
  w.flush();
  w.now += LINGER_LEASE_TTLS * TTL_MS;
  w.s.expireLeases(w.now);
  for (const t of TENANTS) {
    const l = w.s.tenantStatus(t, w.now)!.ledger;
    expect(l.spent).toBe(w.bill.get(t) ?? 0);
    expect(l.spent).toBeLessThanOrEqual(budgets[t]! + (w.slack.get(t) ?? 0));
    expect(l.reserved).toBe(0);
  }
}

describe('per-step reservation against the policy core', () => {
  it('a late call of an expired lease is covered by its lingering reservation: the budget holds', () => {
    const w = world({ a: 1000, b: 1000 });
    const ledger = () => w.s.tenantStatus('a', w.now)!.ledger;
    w.apply({ k: 'submit', tenant: 0, estimate: 500 });
    w.apply({ k: 'admit' });
    w.apply({ k: 'start', run: 0, worst: 500, share: 1 });
    w.apply({ k: 'expire' }); // the lease ends under the step: its 500 stay reserved
    expect(ledger()).toMatchObject({ reserved: 500, spent: 0 });
    w.apply({ k: 'submit', tenant: 0, estimate: 500 }); // another run gets the other 500 only
    w.apply({ k: 'admit' });
    w.apply({ k: 'start', run: 1, worst: 500, share: 1 });
    w.apply({ k: 'finish', step: 1, retried: false });
    w.apply({ k: 'release', run: 1 });
    w.apply({ k: 'finish', step: 0, retried: false }); // the late call: billed, charged from the linger
    w.flush();
    expect(ledger()).toMatchObject({ reserved: 0, spent: 1000 });
    expect(w.bill.get('a')).toBe(1000);
  });

  it('the bound is reached: a late call lands after its lingering reservation ended and was spent by another run', () => {
    const w = world({ a: 1000, b: 1000 });
    w.apply({ k: 'submit', tenant: 0, estimate: 500 });
    w.apply({ k: 'admit' });
    w.apply({ k: 'start', run: 0, worst: 500, share: 1 }); // covered by the admission's 500
    w.apply({ k: 'expire' }); // the lease ends under the step: its 500 linger...
    for (let i = 0; i < LINGER_LEASE_TTLS; i++) w.apply({ k: 'expire' }); // ...and then go back to the budget
    expect(w.s.tenantStatus('a', w.now)!.ledger.reserved).toBe(0);
    expect(w.slack.get('a')).toBe(500);
    w.apply({ k: 'submit', tenant: 0, estimate: 1000 });
    w.apply({ k: 'admit' });
    w.apply({ k: 'start', run: 1, worst: 1000, share: 1 });
    w.apply({ k: 'finish', step: 1, retried: false });
    w.apply({ k: 'release', run: 1 });
    w.apply({ k: 'finish', step: 0, retried: false }); // the late call: billed, and charged
    w.flush();
    const l = w.s.tenantStatus('a', w.now)!.ledger;
    expect(w.bill.get('a')).toBe(1500);
    expect(l.spent).toBe(1500); // the ledger follows the bill, over the budget by exactly the bound
    expect(l.spent).toBe(1000 + w.slack.get('a')!);
  });

  it('without expiries or retries: spent + reserved ≤ budget after every step, and spent == bill', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(opArb(false, false), { minLength: 60, maxLength: 200 }), (b, ops) =>
        check(b, ops, true),
      ),
      { numRuns: 400 },
    );
  });

  it('with expiries under running steps: spent ≤ budget + their worst cases, and spent == bill', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(opArb(false, true), { minLength: 60, maxLength: 200 }), (b, ops) =>
        check(b, ops, false),
      ),
      { numRuns: 400 },
    );
  });

  it('with expiries under running steps and retried calls: spent ≤ budget + the bound, and spent == bill', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(opArb(true, true), { minLength: 60, maxLength: 200 }), (b, ops) =>
        check(b, ops, false),
      ),
      { numRuns: 400 },
    );
  });
});

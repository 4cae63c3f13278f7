import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Charge, FleetScheduler } from '../../../src/scheduler';
import { LINGER_LEASE_TTLS } from '../../../src/scheduler/lingers';
import { T0, makeFleet } from './helpers';

/**
 * A model of runs calling a provider through the scheduler, as the activities do: every call is
 * billed by the provider and charged call by call (through a mailbox flushed at random times), a run
 * reserves before a call that would overrun its reservation (top-up) and stops when refused, leases
 * expire under it (revokes) and it queues again, parallel calls and retried calls are billed each.
 */
const TENANTS = ['a', 'b'] as const;
const TTL_MS = 1000;

type Op =
  | { k: 'submit'; tenant: number; estimate: number }
  | { k: 'admit' }
  | { k: 'call'; run: number; tokens: number; parallel: number; retries: number }
  | { k: 'late'; run: number; tokens: number }
  | { k: 'flush' }
  | { k: 'release'; run: number }
  | { k: 'expire' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    k: fc.constant('submit' as const),
    tenant: fc.nat(1),
    estimate: fc.integer({ min: 1, max: 800 }),
  }),
  fc.record({ k: fc.constant('admit' as const) }),
  fc.record({
    k: fc.constant('call' as const),
    run: fc.nat(30),
    tokens: fc.integer({ min: 1, max: 400 }),
    parallel: fc.integer({ min: 1, max: 4 }),
    retries: fc.integer({ min: 0, max: 2 }),
  }),
  fc.record({ k: fc.constant('late' as const), run: fc.nat(30), tokens: fc.integer({ min: 1, max: 400 }) }),
  fc.record({ k: fc.constant('flush' as const) }),
  fc.record({ k: fc.constant('release' as const), run: fc.nat(30) }),
  fc.record({ k: fc.constant('expire' as const) }),
);

interface Run {
  id: string;
  tenant: string;
  estimate: number;
  attempt: number;
  /** The lease the run believes it holds: its attempt's reservation and what its calls cost so far. */
  lease: { reserved: number; charged: number } | null;
  /** The attempt whose lease just expired, while a step of it may still be under way. */
  lateAttempt: number | null;
  /** What that lease had reserved and its calls had not been charged, and when it expired. */
  lateLeft: number;
  lateAt: number;
  done: boolean;
}

class World {
  now = T0;
  readonly runs: Run[] = [];
  readonly bill = new Map<string, number>();
  private pending: Charge[] = [];

  /**
   * `bounded`: a late call costs at most what its expired lease had reserved and not been charged
   * (the run reserved its worst case before it went), and is billed and charged within the linger.
   */
  constructor(
    readonly s: FleetScheduler,
    readonly budgets: Record<string, number>,
    readonly bounded = false,
  ) {}

  private billCall(r: Run, attempt: number, tokens: number): void {
    this.bill.set(r.tenant, (this.bill.get(r.tenant) ?? 0) + tokens);
    this.pending.push({ tenant: r.tenant, runId: r.id, attempt, tokens });
  }

  apply(op: Op): void {
    const s = this.s;
    if (op.k === 'submit') {
      const id = `r${this.runs.length}`;
      const tenant = TENANTS[op.tenant]!;
      const [res] = s.submit([{ runId: id, tenant, priority: 'standard', cost: op.estimate }], this.now);
      if (res?.accepted)
        this.runs.push({
          id,
          tenant,
          estimate: op.estimate,
          attempt: 0,
          lease: null,
          lateAttempt: null,
          lateLeft: 0,
          lateAt: 0,
          done: false,
        });
    } else if (op.k === 'admit') {
      for (const a of s.admit(this.now)) {
        const r = this.runs.find((x) => x.id === a.runId)!;
        expect(a.attempt).toBe(r.attempt);
        r.lease = { reserved: a.reserved, charged: 0 };
      }
    } else if (op.k === 'call') {
      const r = this.runs[op.run];
      if (!r?.lease || r.done) return;
      // Parallel steps and retries of a step: each call reserves before it goes, and each is billed.
      for (let i = 0; i < op.parallel * (1 + op.retries); i++) {
        const lease = r.lease;
        const need = lease.charged + op.tokens - lease.reserved;
        if (need > 0) {
          const t = s.topUp(r.id, r.attempt, need, this.now);
          if (!t.granted) {
            // budget_exhausted: the run fails, giving its slot back.
            this.flush();
            s.release(
              [{ runId: r.id, attempt: r.attempt, usedTokens: 0, outcome: 'failed', perCall: true }],
              this.now,
            );
            r.lease = null;
            r.done = true;
            return;
          }
          lease.reserved = t.reserved;
        }
        lease.charged += op.tokens;
        this.billCall(r, r.attempt, op.tokens);
        s.renew([{ runId: r.id, attempt: r.attempt, usedTokens: lease.charged, perCall: true }], this.now);
      }
    } else if (op.k === 'late') {
      // A step of an expired attempt (one of those whose step may still be under way) finishes
      // after its lease ended: the provider billed it.
      const late = this.runs.filter((x) => x.lateAttempt !== null);
      const r = late[op.run % Math.max(1, late.length)];
      if (!r || r.lateAttempt === null) return;
      if (!this.bounded) {
        this.billCall(r, r.lateAttempt, op.tokens);
        r.lateAttempt = null;
        return;
      }
      const tokens = Math.min(op.tokens, r.lateLeft);
      if (tokens <= 0 || this.now >= r.lateAt + (LINGER_LEASE_TTLS - 1) * TTL_MS) return;
      r.lateLeft -= tokens;
      this.billCall(r, r.lateAttempt, tokens);
    } else if (op.k === 'flush') {
      this.flush();
    } else if (op.k === 'release') {
      const r = this.runs[op.run];
      if (!r?.lease || r.done) return;
      this.flush(); // the release follows its calls' charges in the same or a later report
      s.release(
        [
          {
            runId: r.id,
            attempt: r.attempt,
            usedTokens: r.lease.charged,
            outcome: 'completed',
            perCall: true,
          },
        ],
        this.now,
      );
      r.lease = null;
      r.done = true;
    } else {
      // Bounded: a charge of an expired attempt reaches the scheduler within a lease TTL, so before
      // the linger that covers it ends.
      const late = (c: Charge) => c.attempt < (this.runs.find((r) => r.id === c.runId)?.attempt ?? 0);
      if (this.bounded && this.pending.some(late)) this.flush();
      this.now += TTL_MS;
      for (const a of s.expireLeases(this.now)) {
        const r = this.runs.find((x) => x.id === a.runId)!;
        r.lateLeft = r.lease ? r.lease.reserved - r.lease.charged : 0;
        r.lateAt = this.now;
        r.lateAttempt = r.attempt;
        r.attempt++;
        r.lease = null;
        s.submit(
          [{ runId: r.id, tenant: r.tenant, priority: 'standard', cost: r.estimate, attempt: r.attempt }],
          this.now,
        );
      }
    }
  }

  flush(): void {
    this.s.charge(this.pending, this.now);
    this.pending = [];
  }
}

function world(budgets: Record<string, number>, bounded = false): World {
  const s = makeFleet({
    settings: { concurrency: 8, leaseTtlSeconds: TTL_MS / 1000 },
    tenants: Object.fromEntries(
      TENANTS.map((t) => [
        t,
        { maxInFlight: 4, maxQueued: 1000, budget: { tokens: budgets[t]!, period: 'none' } },
      ]),
    ),
  });
  return new World(s, budgets, bounded);
}

const budgetsArb = fc.record({
  a: fc.integer({ min: 200, max: 5000 }),
  b: fc.integer({ min: 200, max: 5000 }),
});

describe('the ledger follows the provider bill', () => {
  it('spent == bill for every tenant, and spent + reserved ≤ budget when every call was reserved first, late calls of expired attempts included', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(opArb, { minLength: 40, maxLength: 150 }), (budgets, ops) => {
        const w = world(budgets, true);
        for (const op of ops) {
          w.apply(op);
          for (const t of TENANTS) {
            const l = w.s.tenantStatus(t, w.now)!.ledger;
            expect(l.spent + l.reserved).toBeLessThanOrEqual(budgets[t]!);
            expect(l.reserved).toBeGreaterThanOrEqual(0);
          }
        }
        w.flush();
        for (const t of TENANTS) {
          const l = w.s.tenantStatus(t, w.now)!.ledger;
          expect(l.spent).toBe(w.bill.get(t) ?? 0);
          expect(l.spent).toBeLessThanOrEqual(budgets[t]!);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('late calls of expired attempts are booked too: spent == bill for every tenant', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(opArb, { minLength: 40, maxLength: 150 }), (budgets, ops) => {
        const w = world(budgets);
        for (const op of ops) w.apply(op);
        w.flush();
        for (const r of w.runs)
          if (r.lease)
            w.s.release(
              [{ runId: r.id, attempt: r.attempt, usedTokens: 0, outcome: 'completed', perCall: true }],
              w.now,
            );
        // Once the lingers of expired leases ended, nothing is reserved.
        const later = w.now + LINGER_LEASE_TTLS * TTL_MS;
        w.s.expireLeases(later);
        for (const t of TENANTS) {
          const l = w.s.tenantStatus(t, later)!.ledger;
          expect(l.spent).toBe(w.bill.get(t) ?? 0);
          expect(l.reserved).toBe(0);
        }
      }),
      { numRuns: 500 },
    );
  });
});

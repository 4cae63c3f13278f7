import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetScheduler, chargeId } from '../../../src/scheduler';
import type { Charge } from '../../../src/scheduler';
import { ChargeKeys, FencedOwners, ownerId } from '../../../src/scheduler/charge-keys';
import { T0, makeFleet } from './helpers';

/**
 * The ledger's call keys, against a model of the workers' protocol: every call is reserved first
 * (a top-up when it would overrun), then charged its bill or, its outcome unknown, its worst case
 * provisionally, later corrected by billed − worst case (a call never served is billed 0). Every
 * message may be delivered more than once (a report sent again, a sweep charging a dead worker's
 * delivered call) until its worker confirms it settled; corrections come only once their charge was
 * delivered; the scheduler continues-as-new (snapshot, restore) at random moments.
 */
const TENANTS = ['a', 'b'] as const;

interface Msg {
  charge: Charge;
  delivered: number;
  /** For a provisional charge: what the provider billed, corrected once the charge is settled. */
  billed?: number;
}

type Op =
  | { k: 'submit'; tenant: number; estimate: number }
  | { k: 'admit' }
  | { k: 'call'; run: number; worst: number; billed: number; known: boolean }
  | { k: 'deliver'; msg: number }
  | { k: 'confirm'; msg: number }
  | { k: 'release'; run: number }
  | { k: 'restore' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    k: fc.constant('submit' as const),
    tenant: fc.nat(1),
    estimate: fc.integer({ min: 1, max: 600 }),
  }),
  fc.record({ k: fc.constant('admit' as const) }),
  fc
    .record({
      k: fc.constant('call' as const),
      run: fc.nat(20),
      worst: fc.integer({ min: 1, max: 300 }),
      billed: fc.integer({ min: 0, max: 300 }),
      known: fc.boolean(),
    })
    .map((o) => ({ ...o, billed: Math.min(o.billed, o.worst) })),
  fc.record({ k: fc.constant('deliver' as const), msg: fc.nat(60) }),
  fc.record({ k: fc.constant('deliver' as const), msg: fc.nat(60) }),
  fc.record({ k: fc.constant('confirm' as const), msg: fc.nat(60) }),
  fc.record({ k: fc.constant('release' as const), run: fc.nat(20) }),
  fc.record({ k: fc.constant('restore' as const) }),
);

interface Run {
  id: string;
  tenant: string;
  lease: { reserved: number; charged: number } | null;
  done: boolean;
  calls: number;
  msgs: Msg[];
}

class World {
  now = T0;
  readonly runs: Run[] = [];
  readonly bill = new Map<string, number>();
  /** Messages that may still be delivered (not yet confirmed). */
  pending: Msg[] = [];

  constructor(public s: FleetScheduler) {}

  private deliver(m: Msg): void {
    this.s.charge([m.charge], this.now);
    m.delivered++;
  }

  apply(op: Op): void {
    const s = this.s;
    this.now += 10;
    if (op.k === 'submit') {
      const id = `r${this.runs.length}`;
      const tenant = TENANTS[op.tenant]!;
      const [res] = s.submit([{ runId: id, tenant, priority: 'standard', cost: op.estimate }], this.now);
      if (res?.accepted) this.runs.push({ id, tenant, lease: null, done: false, calls: 0, msgs: [] });
    } else if (op.k === 'admit') {
      for (const a of s.admit(this.now)) {
        const r = this.runs.find((x) => x.id === a.runId)!;
        r.lease = { reserved: a.reserved, charged: 0 };
      }
    } else if (op.k === 'call') {
      const r = this.runs[op.run];
      if (!r?.lease || r.done) return;
      const need = r.lease.charged + op.worst - r.lease.reserved;
      if (need > 0) {
        const t = s.topUp(r.id, 0, need, this.now);
        if (!t.granted) return;
        r.lease.reserved = t.reserved;
      }
      r.lease.charged += op.worst;
      this.bill.set(r.tenant, (this.bill.get(r.tenant) ?? 0) + op.billed);
      const key = `${r.id}/0/${++r.calls}/k`;
      const base = { tenant: r.tenant, runId: r.id, attempt: 0, key };
      const m: Msg = op.known
        ? { charge: { ...base, tokens: op.billed }, delivered: 0 }
        : { charge: { ...base, tokens: op.worst }, delivered: 0, billed: op.billed };
      r.msgs.push(m);
      this.pending.push(m);
    } else if (op.k === 'deliver') {
      const m = this.pending[op.msg % Math.max(1, this.pending.length)];
      if (m) this.deliver(m);
    } else if (op.k === 'confirm') {
      // The worker settled a delivered message durably: it is never sent again, and says so.
      const i = op.msg % Math.max(1, this.pending.length);
      const m = this.pending[i];
      if (!m || m.delivered === 0) return;
      this.pending.splice(i, 1);
      s.forgetCharges([chargeId(m.charge.key!, m.charge.correction === true)]);
      if (m.billed !== undefined && m.billed !== m.charge.tokens) {
        const fix: Msg = {
          charge: { ...m.charge, tokens: m.billed - m.charge.tokens, correction: true },
          delivered: 0,
        };
        this.pending.push(fix);
      }
    } else if (op.k === 'release') {
      const r = this.runs[op.run];
      if (!r?.lease || r.done) return;
      // A release follows its calls' charges: each delivered at least once.
      for (const m of r.msgs) if (m.delivered === 0 && !m.charge.correction) this.deliver(m);
      s.release(
        [{ runId: r.id, attempt: 0, usedTokens: r.lease.charged, outcome: 'completed', perCall: true }],
        this.now,
      );
      r.lease = null;
      r.done = true;
    } else {
      this.s = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    }
  }

  /** Delivers and confirms everything still pending (corrections included), then ends every lease. */
  finish(): void {
    for (let guard = 0; this.pending.length && guard < 10_000; guard++) {
      this.apply({ k: 'deliver', msg: 0 });
      this.apply({ k: 'confirm', msg: 0 });
    }
    for (const r of this.runs)
      if (r.lease)
        this.s.release(
          [{ runId: r.id, attempt: 0, usedTokens: 0, outcome: 'completed', perCall: true }],
          this.now,
        );
  }
}

const budgetsArb = fc.record({
  a: fc.integer({ min: 200, max: 4000 }),
  b: fc.integer({ min: 200, max: 4000 }),
});

function world(budgets: Record<string, number>): World {
  const tenants: Record<string, object> = {};
  for (const t of TENANTS)
    tenants[t] = { maxInFlight: 4, maxQueued: 1000, budget: { tokens: budgets[t]!, period: 'none' } };
  return new World(makeFleet({ settings: { concurrency: 8 }, tenants }));
}

describe('the ledger books each call key once, and corrections settle provisional charges to the bill', () => {
  it('spent == bill at the end, never double-counted, spent + reserved ≤ budget throughout', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(opArb, { minLength: 1, maxLength: 200 }), (budgets, ops) => {
        const w = world(budgets);
        for (const op of ops) {
          w.apply(op);
          for (const t of TENANTS) {
            const l = w.s.tenantStatus(t, w.now)!.ledger;
            expect(l.spent + l.reserved).toBeLessThanOrEqual(budgets[t]!);
            expect(l.spent).toBeGreaterThanOrEqual(0);
          }
        }
        w.finish();
        for (const t of TENANTS) {
          const l = w.s.tenantStatus(t, w.now)!.ledger;
          expect(l.spent).toBe(w.bill.get(t) ?? 0);
          expect(l.reserved).toBe(0);
          expect(l.spent).toBeLessThanOrEqual(budgets[t]!);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a key delivered again after its charge, or a correction delivered twice, changes nothing', () => {
    const s = makeFleet({ tenants: { a: {} } });
    const c = { tenant: 'a', runId: 'run-a-1', attempt: 0, key: 'run-a-1/0/1/x' };
    s.charge([{ ...c, tokens: 100 }], T0);
    s.charge([{ ...c, tokens: 100 }], T0); // a sweep's repeat of a delivered, unsettled call
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(100);
    s.charge([{ ...c, tokens: -70, correction: true }], T0);
    s.charge([{ ...c, tokens: -70, correction: true }], T0);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(30);
    // Across continue-as-new too.
    const again = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    again.charge([{ ...c, tokens: 100 }], T0);
    again.charge([{ ...c, tokens: -70, correction: true }], T0);
    expect(again.tenantStatus('a', T0)!.ledger.spent).toBe(30);
    // Confirmed settled, the key is forgotten (nothing sends it again).
    again.forgetCharges([chargeId(c.key), chargeId(c.key, true)]);
    expect(again.snapshot().chargeKeys).toBeUndefined();
    // A refund never takes spent below 0, and an unkeyed charge is booked as before.
    again.charge([{ ...c, key: 'other', tokens: -1000, correction: true }], T0);
    expect(again.tenantStatus('a', T0)!.ledger.spent).toBe(0);
  });

  it('stays bounded: past its cap the oldest keys go first', () => {
    const keys = new ChargeKeys(3);
    for (const k of ['a', 'b', 'c', 'd']) expect(keys.admit(chargeId(k))).toBe(true);
    expect(keys.size).toBe(3);
    expect(keys.admit(chargeId('d'))).toBe(false);
    expect(keys.admit(chargeId('a'))).toBe(true); // forgotten: the oldest
    expect(ChargeKeys.restore(keys.snapshot(), 3).snapshot()).toBe(keys.snapshot());
    expect(chargeId('x')).toMatch(/^[0-9a-z]{8}$/);
    expect(chargeId('x')).not.toBe(chargeId('x', true));
  });

  it("drops a fenced owner's charges and corrections, also across continue-as-new; others are booked", () => {
    const s = makeFleet({ tenants: { a: {} } });
    const stalled = ownerId('host/1/stalled');
    const sweeper = ownerId('host/2/sweeper');
    const c = { tenant: 'a', runId: 'run-a-1', attempt: 0 };
    s.charge([{ ...c, key: 'k1', tokens: 100, owner: stalled }], T0); // before the fence: booked
    s.fenceOwners([stalled]);
    s.charge([{ ...c, key: 'k2', tokens: 100, owner: sweeper }], T0); // the sweep's charge
    s.forgetCharges([chargeId('k2')]);
    s.charge([{ ...c, key: 'k2', tokens: 100, owner: stalled }], T0); // held by the stalled worker
    s.charge([{ ...c, key: 'k1', tokens: -50, owner: stalled, correction: true }], T0);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(200);
    const again = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    again.charge([{ ...c, key: 'k3', tokens: 100, owner: stalled }], T0);
    again.charge(
      [
        { ...c, key: 'k4', tokens: 10, owner: sweeper },
        { ...c, key: 'k5', tokens: 1 },
      ],
      T0,
    );
    expect(again.tenantStatus('a', T0)!.ledger.spent).toBe(211);
    // A snapshot from before fences (none in it) restores with none.
    const old = again.snapshot();
    delete old.fencedOwners;
    const restored = FleetScheduler.restore(old);
    restored.charge([{ ...c, key: 'k6', tokens: 5, owner: stalled }], T0);
    expect(restored.tenantStatus('a', T0)!.ledger.spent).toBe(216);
  });

  it('remembers the owners fenced last: past its cap the one fenced longest ago goes first', () => {
    const owners = new FencedOwners(2);
    owners.fence(['a', 'b']);
    owners.fence(['a']); // fenced again: newest
    owners.fence(['c']);
    expect([owners.has('a'), owners.has('b'), owners.has('c')]).toEqual([true, false, true]);
    expect(FencedOwners.restore(owners.snapshot(), 2).snapshot()).toBe('a c');
    expect(ownerId('x')).toMatch(/^[0-9a-z]{8}$/);
    expect(ownerId('x')).not.toBe(chargeId('x'));
  });
});

describe('a usage floor after the recovery ended', () => {
  it('does not undo a refund (runs count a cut call at its worst case); while recovering it floors', () => {
    const s = makeFleet({ tenants: { a: {} } });
    const c = { tenant: 'a', runId: 'run-a-1', attempt: 0, key: 'run-a-1/0/1/x' };
    s.charge([{ ...c, tokens: 100 }], T0);
    s.charge([{ ...c, tokens: -60, correction: true }], T0);
    const [w] = s.recoveryWindows(T0);
    s.floorSpent([{ ...w!, tokens: 100 }], T0, T0, true, true);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(40);
    s.beginRecovery(T0);
    s.floorSpent([{ ...w!, tokens: 100 }], T0, T0, true, true);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(100);
  });
});

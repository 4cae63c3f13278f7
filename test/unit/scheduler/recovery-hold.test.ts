import { describe, expect, it } from 'vitest';
import { FleetScheduler, RECOVERY_HOLD_WINDOW_MS } from '../../../src/scheduler';
import type { Admission } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const done = (a: Admission, tenant: string) => ({
  runId: a.runId,
  attempt: a.attempt,
  usedTokens: a.reserved,
  outcome: 'completed' as const,
  tenant,
  perCall: false,
});

/** A chain that lost its ledger (fresh after a loss, or reset): spent 0 where the lost chain had 800. */
function lostChain() {
  const s = makeFleet({
    tenants: { capped: { budget: { tokens: 1000, period: 'day' } }, free: {} },
  });
  s.enableRecovery();
  s.beginRecovery(T0);
  return s;
}

describe('a recovering scheduler chain holds budgeted tenants until its usage floor lands (issue 9)', () => {
  it('admits nothing of a budgeted tenant before the floor, then only what the budget still covers', () => {
    const s = lostChain();
    // The door sees spent 0 (the lost chain had spent 800 of 1,000) and queues 5 × 100.
    expect(s.submit(units('capped', 5), T0).every((r) => r.accepted)).toBe(true);
    s.submit(units('free', 3), T0);
    const before = s.admit(T0 + 1);
    // Tenants without a budget keep admitting; the budgeted one waits, and says why.
    expect(before.map((a) => a.runId)).toEqual(units('free', 3).map((u) => u.runId));
    expect(s.explain('capped-standard-0', T0 + 1)).toMatchObject({ code: 'budget' });
    expect(s.needsFloor()).toBe(true);

    const windows = s.recoveryWindows(T0 + 2, true);
    s.floorSpent(
      windows.map((w) => ({ ...w, tokens: w.tenant === 'capped' ? 800 : 0 })),
      T0 + 3,
      T0 + 2,
    );
    // Only 200 tokens are left: the 3 latest units can never be covered this period and end now.
    const refused = s.refuseUncoverable(T0 + 3);
    expect(refused.map((r) => r.runId)).toEqual([
      'capped-standard-4',
      'capped-standard-3',
      'capped-standard-2',
    ]);
    expect(refused[0]!.message).toMatch(/budget cannot cover/);
    const after = s.admit(T0 + 4);
    expect(after.map((a) => a.runId)).toEqual(['capped-standard-0', 'capped-standard-1']);
    s.release(
      after.map((a) => done(a, 'capped')),
      T0 + 5,
    );
    const ledger = s.tenantStatus('capped', T0 + 5)!.ledger;
    expect(ledger.spent).toBe(1000);
    expect(ledger.spent).toBeLessThanOrEqual(1000);
    expect(s.status(T0 + 5).queued.total).toBe(0);
  });

  it('a tenant that appears within the hold window is held until a floor covers it; later ones are not', () => {
    const s = lostChain();
    s.floorSpent(
      s.recoveryWindows(T0, true).map((w) => ({ ...w, tokens: 0 })),
      T0 + 1,
      T0,
    );
    expect(s.needsFloor()).toBe(false);
    // The API re-sends a tenant after the first floor: it may have spent in the lost chain.
    s.upsertTenant(
      'late',
      { weight: 1, maxQueued: 100, maxInFlight: 10, budget: { tokens: 500, period: 'day' } },
      T0 + 2,
    );
    s.submit(units('late', 1), T0 + 2);
    expect(s.admit(T0 + 3)).toEqual([]);
    expect(s.needsFloor()).toBe(true);
    // A floor asked for after the window covers it and ends the recovery.
    const at = T0 + RECOVERY_HOLD_WINDOW_MS + 1;
    s.floorSpent(
      s.recoveryWindows(at, true).map((w) => ({ ...w, tokens: 0 })),
      at + 1,
      at,
    );
    expect(s.recoverySince()).toBeNull();
    expect(s.admit(at + 2).map((a) => a.runId)).toEqual(['late-standard-0']);
    s.upsertTenant(
      'new',
      { weight: 1, maxQueued: 100, maxInFlight: 10, budget: { tokens: 500, period: 'day' } },
      at + 3,
    );
    s.submit(units('new', 1), at + 3);
    expect(s.admit(at + 4).map((a) => a.runId)).toEqual(['new-standard-0']);
  });

  it('continue-as-new while recovering keeps the recovery and holds every tenant again', () => {
    const s = lostChain();
    s.submit(units('capped', 1), T0);
    const r = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    r.enableRecovery();
    expect(r.recoverySince()).toBe(T0);
    expect(r.admit(T0 + 1)).toEqual([]);
    r.floorSpent(
      r.recoveryWindows(T0 + 2, true).map((w) => ({ ...w, tokens: 0 })),
      T0 + 3,
      T0 + 2,
    );
    expect(r.admit(T0 + 4).map((a) => a.runId)).toEqual(['capped-standard-0']);
  });

  it('a tenant set to park keeps its uncoverable units queued (they wait for the period or a raise)', () => {
    const s = makeFleet({
      tenants: { p: { budget: { tokens: 1000, period: 'day' }, onBudgetExhausted: 'park' } },
    });
    s.enableRecovery();
    s.submit(units('p', 5), T0);
    s.floorSpent(
      s.recoveryWindows(T0, true).map((w) => ({ ...w, tokens: 900 })),
      T0 + 1,
    );
    expect(s.refuseUncoverable(T0 + 1)).toEqual([]);
    expect(s.admit(T0 + 2).map((a) => a.runId)).toEqual(['p-standard-0']);
    expect(s.status(T0 + 2).queued.total).toBe(4);
    // The setting survives continue-as-new.
    const r = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    r.enableRecovery();
    expect(r.refuseUncoverable(T0 + 3)).toEqual([]);
  });

  it('a run adopted from the lost chain has what it already paid counted against the budget', () => {
    const s = lostChain();
    s.floorSpent(
      s.recoveryWindows(T0, true).map((w) => ({ ...w, tokens: 0 })),
      T0 + 1,
      T0,
    );
    // A renewal of a run the lost chain admitted: 300 tokens used (and billed) so far, cost 400.
    s.renew(
      [{ runId: 'capped-old', attempt: 0, usedTokens: 300, tenant: 'capped', cost: 400, perCall: true }],
      T0 + 2,
    );
    const ledger = s.tenantStatus('capped', T0 + 2)!.ledger;
    expect(ledger.spent).toBe(300);
    expect(ledger.reserved).toBe(100);
    expect(ledger.remaining).toBe(600);
  });
});

import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import type { Admission, TenantSettings } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const done = (a: Admission, tenant: string) => ({
  runId: a.runId,
  attempt: a.attempt,
  usedTokens: a.reserved,
  outcome: 'completed' as const,
  tenant,
  perCall: false,
});

const budgeted = (tokens: number): TenantSettings => ({
  weight: 1,
  maxQueued: 100,
  maxInFlight: 10,
  budget: { tokens, period: 'day' },
});

/** A chain that lost its ledger (fresh after a loss, or reset): its ledgers start at 0. */
function lostChain() {
  const s = makeFleet({ tenants: { capped: { budget: { tokens: 1000, period: 'day' } }, free: {} } });
  s.beginRecovery(T0);
  return s;
}

/**
 * A floor with `tokens` per tenant (0 when absent), asked for at `at` and landing 1 ms later; `quiet`:
 * it found no run open past its admission.
 */
function floor(s: FleetScheduler, at: number, tokens: Record<string, number> = {}, quiet = false): void {
  s.floorSpent(
    s.recoveryWindows(at).map((w) => ({ ...w, tokens: tokens[w.tenant] ?? 0 })),
    at + 1,
    at,
    quiet,
  );
}

describe('a recovering scheduler chain holds budgeted tenants until its usage floor lands (issue 9)', () => {
  it('admits nothing of a budgeted tenant before the floor, then only what the budget still covers', () => {
    const s = lostChain();
    const after = T0 + s.recoveryHoldMs() + 1;
    // The door sees spent 0 (the lost chain had spent 800 of 1,000) and queues 5 × 100.
    expect(s.submit(units('capped', 5), T0).every((r) => r.accepted)).toBe(true);
    s.submit(units('free', 3), T0);
    // Tenants without a budget keep admitting; the budgeted one waits, and says why.
    expect(s.admit(T0 + 1).map((a) => a.runId)).toEqual(units('free', 3).map((u) => u.runId));
    expect(s.explain('capped-standard-0', T0 + 1)).toMatchObject({ code: 'budget' });
    expect(s.needsFloor()).toBe(true);
    // A floor asked for within the hold window raises spent but lifts no hold: runs of the lost
    // chain may still come back with what they used.
    floor(s, T0 + 2, { capped: 700 });
    expect(s.tenantStatus('capped', T0 + 3)!.ledger.spent).toBe(700);
    expect(s.admit(T0 + 3)).toEqual([]);

    floor(s, after, { capped: 800 });
    // Only 200 tokens are left: the 3 latest units can never be covered this period and end now.
    const refused = s.refuseUncoverable(after + 1);
    expect(refused.map((r) => r.runId)).toEqual([
      'capped-standard-4',
      'capped-standard-3',
      'capped-standard-2',
    ]);
    expect(refused[0]!.message).toMatch(/budget cannot cover/);
    const admitted = s.admit(after + 2);
    expect(admitted.map((a) => a.runId)).toEqual(['capped-standard-0', 'capped-standard-1']);
    s.release(
      admitted.map((a) => done(a, 'capped')),
      after + 3,
    );
    expect(s.tenantStatus('capped', after + 3)!.ledger.spent).toBe(1000);
    expect(s.status(after + 3).queued.total).toBe(0);
    expect(s.recoverySince()).toBeNull();
  });

  it('a tenant that appears within the hold window is held until a floor covers it; later ones are not', () => {
    const s = lostChain();
    const after = T0 + s.recoveryHoldMs() + 1;
    // The API re-sends a tenant: it may have spent in the lost chain.
    s.upsertTenant('late', budgeted(500), T0 + 2);
    s.submit(units('late', 1), T0 + 2);
    expect(s.admit(T0 + 3)).toEqual([]);
    floor(s, after);
    expect(s.needsFloor()).toBe(false);
    expect(s.recoverySince()).toBeNull();
    expect(s.admit(after + 2).map((a) => a.runId)).toEqual(['late-standard-0']);
    s.upsertTenant('new', budgeted(500), after + 3);
    s.submit(units('new', 1), after + 3);
    expect(s.admit(after + 4).map((a) => a.runId)).toEqual(['new-standard-0']);
  });

  it('continue-as-new while recovering keeps the recovery and holds every tenant again', () => {
    const s = lostChain();
    s.submit(units('capped', 1), T0);
    const r = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(r.recoverySince()).toBe(T0);
    expect(r.admit(T0 + 1)).toEqual([]);
    const after = T0 + r.recoveryHoldMs() + 1;
    floor(r, after);
    expect(r.admit(after + 2).map((a) => a.runId)).toEqual(['capped-standard-0']);
  });

  it('a tenant set to park keeps its uncoverable units queued (they wait for the period or a raise)', () => {
    const s = makeFleet({
      tenants: { p: { budget: { tokens: 1000, period: 'day' }, onBudgetExhausted: 'park' } },
    });
    s.submit(units('p', 5), T0);
    s.floorSpent(
      s.recoveryWindows(T0).map((w) => ({ ...w, tokens: 900 })),
      T0 + 1,
    );
    expect(s.refuseUncoverable(T0 + 1)).toEqual([]);
    expect(s.admit(T0 + 2).map((a) => a.runId)).toEqual(['p-standard-0']);
    expect(s.status(T0 + 2).queued.total).toBe(4);
    // The setting survives continue-as-new.
    const r = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(r.refuseUncoverable(T0 + 3)).toEqual([]);
  });

  it('runs of the lost chain that come back count what they already paid against the budget', () => {
    const s = lostChain();
    // A renewal of a run the lost chain admitted: 300 tokens used (and billed) so far, cost 400.
    s.renew(
      [{ runId: 'capped-old', attempt: 0, usedTokens: 300, tenant: 'capped', cost: 400, perCall: true }],
      T0 + 2,
    );
    // A run whose lease the new chain never knew offers its next attempt, having used 150.
    const [r] = s.submit(
      [
        {
          runId: 'capped-retry',
          tenant: 'capped',
          priority: 'standard',
          cost: 50,
          attempt: 1,
          usedTokens: 150,
        },
      ],
      T0 + 3,
    );
    expect(r).toMatchObject({ accepted: true, duplicate: false });
    const ledger = s.tenantStatus('capped', T0 + 3)!.ledger;
    expect(ledger.spent).toBe(450);
    expect(ledger.reserved).toBe(100);
    // A repeat of that offer counts nothing more.
    s.submit(
      [
        {
          runId: 'capped-retry',
          tenant: 'capped',
          priority: 'standard',
          cost: 50,
          attempt: 1,
          usedTokens: 150,
        },
      ],
      T0 + 4,
    );
    expect(s.tenantStatus('capped', T0 + 4)!.ledger.spent).toBe(450);
    // Without a budget nothing is counted twice: the floors settle it once the runs have closed.
    s.renew(
      [{ runId: 'free-old', attempt: 0, usedTokens: 300, tenant: 'free', cost: 400, perCall: true }],
      T0 + 5,
    );
    expect(s.tenantStatus('free', T0 + 5)!.ledger.spent).toBe(0);
  });

  it('a floor that found no run workflow open ends the hold at once (a first start, a loss while idle)', () => {
    const s = lostChain();
    s.submit(units('capped', 2), T0);
    expect(s.admit(T0 + 1)).toEqual([]);
    // Within the window, with runs still open: the hold stands.
    floor(s, T0 + 2, { capped: 300 });
    expect(s.admit(T0 + 3)).toEqual([]);
    // No run open: every run of the lost chain is closed and counted, so nothing can come back.
    floor(s, T0 + 4, { capped: 300 }, true);
    expect(s.needsFloor()).toBe(false);
    expect(s.tenantStatus('capped', T0 + 5)!.ledger.spent).toBe(300);
    expect(s.admit(T0 + 6).map((a) => a.runId)).toEqual(['capped-standard-0', 'capped-standard-1']);
  });
});

import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import { MAX_TOKENS } from '../../../src/scheduler/limits';
import { T0, makeFleet, units } from './helpers';

const budgeted = () =>
  makeFleet({ tenants: { a: { budget: { tokens: 10_000, period: 'day' }, onBudgetExhausted: 'park' } } });

describe('the ledger holds finite numbers only', () => {
  it('keeps an absurd bill finite, and the budget spent, across a snapshot', () => {
    const s = budgeted();
    s.charge([{ tenant: 'a', runId: 'r1', attempt: 0, tokens: 1e308 }], T0);
    s.charge([{ tenant: 'a', runId: 'r1', attempt: 0, tokens: 1e308 }], T0);
    const spent = s.tenantStatus('a', T0)!.ledger.spent;
    expect(Number.isFinite(spent)).toBe(true);
    expect(spent).toBeLessThanOrEqual(2 * MAX_TOKENS);
    const restored = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(restored.tenantStatus('a', T0)!.ledger.spent).toBe(spent);
    restored.submit(units('a', 1, 'standard', 9000), T0);
    expect(restored.admit(T0)).toEqual([]);
  });

  it('restores a spend that is not a finite number as the budget exhausted, never as 0', () => {
    const s = budgeted();
    s.charge([{ tenant: 'a', runId: 'r1', attempt: 0, tokens: 100 }], T0);
    const snap = JSON.parse(JSON.stringify(s.snapshot())) as { tenants: unknown[][] };
    const ledger = snap.tenants[0]![3] as (number | null)[];
    ledger[3] = null; // what JSON makes of Infinity
    const restored = FleetScheduler.restore(snap as never);
    expect(restored.tenantStatus('a', T0)!.ledger.spent).toBe(10_000);
    restored.submit(units('a', 1, 'standard', 9000), T0);
    expect(restored.admit(T0)).toEqual([]);
  });

  it('never lowers a run’s usage with a negative count', () => {
    const s = budgeted();
    s.submit(units('a', 1, 'standard', 1000), T0);
    const [adm] = s.admit(T0);
    s.charge([{ tenant: 'a', runId: adm!.runId, attempt: 0, tokens: 500 }], T0);
    s.charge([{ tenant: 'a', runId: adm!.runId, attempt: 0, tokens: -400 }], T0);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(500);
  });
});

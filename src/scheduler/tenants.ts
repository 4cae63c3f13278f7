import type { CoreState } from './core';
import { newFlow } from './fair-queue';
import { applyBudget, newLedger, rollIfDue } from './ledger';
import { FAIRNESS_KEY_PATTERN, MAX_KEY_WEIGHTS } from './limits';
import type { TenantState } from './queue-state';
import { newRate } from './rate';
import type { BudgetPeriod, TenantSettings } from './types';

/** Settings of a tenant created without any: weight 1, 10,000 queued, 50 in flight, no budget. */
export function defaultTenantSettings(overrides: Partial<TenantSettings> = {}): TenantSettings {
  return {
    weight: 1,
    maxQueued: 10_000,
    maxInFlight: 50,
    budget: { tokens: null, period: 'none' },
    ...overrides,
  };
}

const PERIODS: readonly BudgetPeriod[] = ['hour', 'day', 'month', 'none'];
const count = (x: number, def: number) => (Number.isFinite(x) ? Math.max(0, Math.floor(x)) : def);

/*
 * The API validates settings; the core still clamps instead of throwing, because a
 * throw inside the scheduler workflow's signal handler would fail the whole fleet.
 */
export function sanitizeSettings(s: TenantSettings): TenantSettings {
  const d = defaultTenantSettings();
  const tokens = s.budget?.tokens;
  return {
    weight: Number.isFinite(s.weight) && s.weight > 0 ? s.weight : d.weight,
    maxQueued: count(s.maxQueued, d.maxQueued),
    maxInFlight: count(s.maxInFlight, d.maxInFlight),
    budget: {
      tokens:
        tokens === null || tokens === undefined || !Number.isFinite(tokens) ? null : Math.max(0, tokens),
      period: PERIODS.includes(s.budget?.period) ? s.budget.period : 'none',
    },
    // Kept only when it is `park` (the default, `fail`, is absent): queued units of a `park` tenant
    // wait for its budget, the others end when it can no longer cover them (`refuseUncoverable`).
    ...(s.onBudgetExhausted === 'park' ? { onBudgetExhausted: 'park' as const } : {}),
    ...keyWeightsOf(s.keyWeights),
  };
}

/** The first MAX_KEY_WEIGHTS key weights of fairness keys in their form, finite and > 0 (absent when none is). */
function keyWeightsOf(w: TenantSettings['keyWeights']): Pick<TenantSettings, 'keyWeights'> {
  const kept = Object.entries(w ?? {})
    .filter(([k, x]) => FAIRNESS_KEY_PATTERN.test(k) && Number.isFinite(x) && x > 0)
    .slice(0, MAX_KEY_WEIGHTS);
  return kept.length > 0 ? { keyWeights: Object.fromEntries(kept) } : {};
}

export function createTenant(id: string, ord: number, settings: TenantSettings, now: number): TenantState {
  const t = {
    id,
    ord,
    settings,
    inFlight: 0,
    queued: 0,
    queuedCost: 0,
    ledger: newLedger(settings.budget, now),
    rate: newRate(now),
    seenAt: now,
  } as TenantState;
  t.flows = [newFlow(t, 0), newFlow(t, 1), newFlow(t, 2)];
  return t;
}

export function applySettings(t: TenantState, settings: TenantSettings, now: number): void {
  t.settings = settings;
  applyBudget(t.ledger, settings.budget, now);
}

/** Rolls the tenant's budget period over when due, writing the rollover to the log; true when it rolled. */
export function touchLedger(s: CoreState, t: TenantState, now: number): boolean {
  const closed = rollIfDue(t.ledger, now);
  if (closed === null) return false;
  s.log.append(t.id, t.ledger.periodStart, '', 'rollover', closed);
  return true;
}

/**
 * Whether a tenant carries nothing the core must keep: nothing queued or in flight, nothing
 * reserved, nothing spent against a budget in the current period, and not seen (no submission,
 * accepted or shed, no admission) for `idleMs`: a batch offering refused items again keeps its tenant.
 * Such a tenant may leave the core; the API's tenant store brings it back when it submits again.
 */
export function isIdle(s: CoreState, t: TenantState, now: number, idleMs: number): boolean {
  if (t.queued > 0 || t.inFlight > 0 || t.ledger.reserved > 0) return false;
  if (now - t.seenAt < idleMs) return false;
  touchLedger(s, t, now);
  return t.settings.budget.tokens === null || t.ledger.spent === 0;
}

/** Removes idle tenants (oldest activity first, at most `max`); returns their ids. */
export function evictIdle(s: CoreState, now: number, idleMs: number, max = Infinity): string[] {
  const idle = [...s.tenants.values()]
    .filter((t) => isIdle(s, t, now, idleMs))
    .sort((a, b) => a.seenAt - b.seenAt || a.ord - b.ord)
    .slice(0, max);
  for (const t of idle) {
    s.tenants.delete(t.id);
    s.budgetParked.delete(t);
    s.overBudget.delete(t);
    s.log.dropTenant(t.id);
  }
  return idle.map((t) => t.id);
}

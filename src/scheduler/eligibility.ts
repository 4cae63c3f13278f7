import type { CoreState } from './core';
import { remaining } from './ledger';
import type { Flow, QueuedUnit, TenantState } from './queue-state';
import { touchLedger } from './tenants';

/** Why a backlogged flow is parked (out of its lane's heap), or null when it may be served. */
export function parkReason(t: TenantState, f: Flow): 'cap' | 'budget' | null {
  if (t.inFlight >= t.settings.maxInFlight) return 'cap';
  const head = f.units[f.head] as QueuedUnit;
  return head.cost > remaining(t.ledger) ? 'budget' : null;
}

/*
 * Parking is eager: after anything that changes a tenant's in-flight count, ledger,
 * settings or head units, its three flows are put in or taken out of their heaps.
 * So the heap top is always admissible, a blocked tenant costs nothing per decision,
 * and the heaps are a pure function of the rest of the state (a restore rebuilds them).
 */
export function refreshTenant(s: CoreState, t: TenantState): void {
  const capped = t.inFlight >= t.settings.maxInFlight;
  const left = remaining(t.ledger);
  // A budgeted tenant whose `spent` may be behind (a recovering chain, no floor yet) admits nothing.
  const held = isHeld(t);
  let budgetBlocked = false;
  for (const f of t.flows) {
    let want = false;
    if (f.live > 0) {
      const broke = (f.units[f.head] as QueuedUnit).cost > left;
      budgetBlocked ||= broke;
      want = !capped && !broke && !held && f.passed !== true;
    }
    const lane = s.lanes[f.lane];
    if (want && f.hi < 0) lane.enter(f);
    else if (!want && f.hi >= 0) lane.leave(f);
  }
  const end = t.ledger.periodEnd;
  if (budgetBlocked && end !== null) {
    if (!s.budgetParked.has(t)) {
      s.budgetParked.add(t);
      s.budgetWakeAt = Math.min(s.budgetWakeAt, end);
    }
  } else {
    s.budgetParked.delete(t);
  }
  if (mayBeUncoverable(t)) s.overBudget.add(t);
}

/** Whether the tenant has a budget and a recovering chain has not floored its `spent` yet. */
export function isHeld(t: TenantState): boolean {
  return t.held === true && t.ledger.budget !== null;
}

/**
 * Whether some queued unit of a tenant that fails on an exhausted budget (not `park`) cannot be
 * covered even if every running unit freed its reservation unused: its queued cost is above
 * `budget − spent` (a check, not the decision: `refuseUncoverable` rolls the period first).
 */
export function mayBeUncoverable(t: TenantState): boolean {
  const b = t.ledger.budget;
  return (
    b !== null && t.queued > 0 && t.settings.onBudgetExhausted !== 'park' && t.queuedCost > b - t.ledger.spent
  );
}

/** Earliest period end among tenants withheld by their budget (exact, O(parked)); Infinity when none. */
export function earliestBudgetRoll(s: CoreState): number {
  let min = Infinity;
  for (const t of s.budgetParked)
    if (t.ledger.periodEnd !== null && t.ledger.periodEnd < min) min = t.ledger.periodEnd;
  return min;
}

/** Rolls over the periods of budget-parked tenants that are due and lets them back in. */
export function wakeBudgetParked(s: CoreState, now: number): void {
  if (now < s.budgetWakeAt) return;
  const due = [...s.budgetParked]
    .filter((t) => t.ledger.periodEnd !== null && now >= t.ledger.periodEnd)
    .sort((a, b) => a.ord - b.ord);
  for (const t of due) {
    touchLedger(s, t, now);
    refreshTenant(s, t);
  }
  s.budgetWakeAt = earliestBudgetRoll(s);
}

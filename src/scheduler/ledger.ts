import { periodEndOf, periodStartOf } from './periods';
import type { BudgetPeriod, LedgerView, TenantSettings } from './types';

/**
 * A tenant's token account for the current period. Invariants: `reserved` is the
 * sum of the reservations of its in-flight units; `spent` is the sum of usage
 * settled since `periodStart`. Reservations made in one period and settled in the
 * next are charged to the period of settlement.
 */
export interface LedgerState {
  budget: number | null;
  period: BudgetPeriod;
  periodStart: number;
  /** null: the period never ends ('none'). */
  periodEnd: number | null;
  reserved: number;
  spent: number;
}

export function newLedger(budget: TenantSettings['budget'], now: number): LedgerState {
  const periodStart = periodStartOf(budget.period, now);
  return {
    budget: budget.tokens,
    period: budget.period,
    periodStart,
    periodEnd: periodEndOf(budget.period, periodStart),
    reserved: 0,
    spent: 0,
  };
}

/*
 * A changed period kind starts a period of the new kind at `now` but keeps what was
 * spent: without the history of the old period we cannot split it, and carrying it
 * over can only under-spend, never overspend.
 */
export function applyBudget(l: LedgerState, budget: TenantSettings['budget'], now: number): void {
  l.budget = budget.tokens;
  if (budget.period !== l.period) {
    l.period = budget.period;
    l.periodStart = periodStartOf(budget.period, now);
    l.periodEnd = periodEndOf(budget.period, l.periodStart);
  }
}

/** Rolls into the period containing `now` when the current one ended; returns the closed period's spend, or null. */
export function rollIfDue(l: LedgerState, now: number): number | null {
  if (l.periodEnd === null || now < l.periodEnd) return null;
  const closed = l.spent;
  l.periodStart = periodStartOf(l.period, now);
  l.periodEnd = periodEndOf(l.period, l.periodStart);
  l.spent = 0;
  return closed;
}

/** Tokens still available for new reservations (Infinity without a budget); may be negative after an overrun. */
export function remaining(l: LedgerState): number {
  return l.budget === null ? Infinity : l.budget - l.reserved - l.spent;
}

/** What `remaining` will be at `now` once a due rollover happened (pure). */
export function remainingAt(l: LedgerState, now: number): number {
  if (l.budget === null) return Infinity;
  const due = l.periodEnd !== null && now >= l.periodEnd;
  return l.budget - l.reserved - (due ? 0 : l.spent);
}

/**
 * The ledger holds finite numbers only: a sum that overflows (or a non-finite input) stays at the
 * largest finite count, which exhausts any budget instead of wiping it (a snapshot would turn
 * Infinity into null, and null into 0).
 */
export function finiteSum(x: number, y: number): number {
  const z = x + y;
  return Number.isFinite(z) ? z : Number.isNaN(z) ? x : Math.sign(z) * Number.MAX_VALUE;
}

export function reserve(l: LedgerState, tokens: number): void {
  l.reserved = finiteSum(l.reserved, tokens);
}

/** Charges `tokens` the provider billed, `fromReservation` of them out of a reservation already held. */
export function consume(l: LedgerState, fromReservation: number, tokens: number): void {
  l.reserved = finiteSum(l.reserved, -fromReservation);
  l.spent = finiteSum(l.spent, tokens);
}

/** Ends a reservation: charges what was used (overrun included) and frees the rest. */
export function settle(l: LedgerState, reservation: number, used: number): void {
  l.reserved = finiteSum(l.reserved, -reservation);
  l.spent = finiteSum(l.spent, used);
}

/**
 * A ledger figure read back from a snapshot: a finite number as it is; anything else (null, which
 * JSON makes of Infinity, or garbage) as `fallback`.
 */
export function restoredFigure(x: unknown, fallback: number): number {
  return typeof x === 'number' && Number.isFinite(x) ? x : fallback;
}

export function ledgerView(l: LedgerState, now: number): LedgerView {
  const due = l.periodEnd !== null && now >= l.periodEnd;
  const periodStart = due ? periodStartOf(l.period, now) : l.periodStart;
  const spent = due ? 0 : l.spent;
  return {
    budget: l.budget,
    period: l.period,
    reserved: l.reserved,
    spent,
    remaining: l.budget === null ? null : l.budget - l.reserved - spent,
    periodStart: new Date(periodStart).toISOString(),
  };
}

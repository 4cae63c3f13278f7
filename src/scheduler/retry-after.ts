import type { CoreState } from './core';
import type { GovernorState } from './governor';
import type { LedgerState } from './ledger';
import type { TenantState } from './queue-state';
import { currentRatePerSecond, recentEvents } from './rate';

/** Retry-After values are whole seconds in [1, MAX_RETRY_AFTER_S] (budget waits excepted). */
export const MAX_RETRY_AFTER_S = 3600;
/** A budget without a period never refills by itself; this is what its refusal advertises. */
export const NO_PERIOD_RETRY_AFTER_S = 3600;

/** Seconds as a Retry-After: whole, in [1, MAX_RETRY_AFTER_S]; not finite is the maximum. */
export const clampSeconds = (s: number) =>
  Number.isFinite(s) ? Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(s))) : MAX_RETRY_AFTER_S;

/** Seconds until `units` more admissions happen at `perSecond`. */
export function secondsToDrain(units: number, perSecond: number): number {
  return perSecond > 0 ? clampSeconds(units / perSecond) : MAX_RETRY_AFTER_S;
}

/*
 * Admission rate from the governor's token allowance, for when nothing has been
 * admitted recently to measure (a cold fleet): tokens per second / unit cost.
 */
function governorRate(g: GovernorState, avgCost: number): number {
  return g.tokensPerMinute / 60 / Math.max(1, avgCost);
}

/**
 * A tenant's admissions per second as the fleet stands now: its measured rate, bounded by its share of
 * what governor `g` (its units' pool's) allows now (a cut shows at once, while a measured rate lags
 * it); null: a pool not governed yet, which bounds nothing.
 */
export function governedTenantRate(
  s: CoreState,
  t: TenantState,
  now: number,
  backloggedWeight: () => number,
  g: GovernorState | null = s.governor,
): number {
  const share = t.settings.weight / Math.max(t.settings.weight, backloggedWeight());
  const governed =
    g === null ? Infinity : governorRate(g, t.queued > 0 ? t.queuedCost / t.queued : 1) * share;
  return Math.min(tenantAdmissionRate(s, t, now, backloggedWeight), governed);
}

/** Fleet admissions per second: measured (EWMA) when there is recent history, else from the governor. */
export function fleetAdmissionRate(s: CoreState, now: number): number {
  if (recentEvents(s.fleetRate, now) >= 1) return currentRatePerSecond(s.fleetRate, now);
  return governorRate(s.governor, s.queued.size > 0 ? s.queuedCost / s.queued.size : 1);
}

/**
 * A tenant's admissions per second: its own EWMA when it was admitted recently,
 * else the fleet's rate times its weight share among backlogged tenants.
 */
export function tenantAdmissionRate(
  s: CoreState,
  t: TenantState,
  now: number,
  backloggedWeight: () => number,
): number {
  if (recentEvents(t.rate, now) >= 1) return currentRatePerSecond(t.rate, now);
  const share = t.settings.weight / Math.max(t.settings.weight, backloggedWeight());
  if (recentEvents(s.fleetRate, now) >= 1) return currentRatePerSecond(s.fleetRate, now) * share;
  return governorRate(s.governor, t.queued > 0 ? t.queuedCost / t.queued : 1) * share;
}

/** Seconds to the end of the budget period (at least 1); NO_PERIOD_RETRY_AFTER_S without one. */
export function budgetRetryAfter(l: LedgerState, now: number): number {
  if (l.periodEnd === null) return NO_PERIOD_RETRY_AFTER_S;
  return Math.max(1, Math.ceil((l.periodEnd - now) / 1000));
}

/** While draining: until the last lease could run out (the drain's upper bound), else one lease TTL. */
export function drainingRetryAfter(s: CoreState, now: number): number {
  const last = s.leases.latestExpiry();
  return clampSeconds(last === null ? s.settings.leaseTtlSeconds : (last - now) / 1000);
}

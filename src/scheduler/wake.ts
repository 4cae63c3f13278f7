import { fleetCap, inFlightTokens, nextCandidate, overInFlightTokens } from './admission';
import type { CoreState } from './core';
import { earliestBudgetRoll } from './eligibility';
import { bucketReadyAt, isPaused } from './governor';

/**
 * Earliest instant at which admit() or expireLeases() could decide differently
 * without any new message: the nearest lease expiry; and, when work is queued and
 * the fleet is open, the end of a governor pause, the token bucket covering the
 * next unit, or the budget period roll of a tenant withheld by its budget. A value
 * equal to `now` means "due already". Null when nothing is pending (pure).
 */
export function nextWakeAt(s: CoreState, now: number): number | null {
  let at = s.leases.earliest()?.expiresAt ?? Infinity;
  if (!s.draining && s.queued.size > 0) {
    const g = s.governor;
    if (isPaused(g, now)) {
      at = Math.min(at, g.pausedUntil);
    } else if (s.leases.size < fleetCap(s)) {
      const next = nextCandidate(s);
      // Too many tokens in flight: a charge or a release frees them, not the passing of time.
      if (next && !overInFlightTokens(s, inFlightTokens(s), next.unit.cost))
        at = Math.min(at, bucketReadyAt(g, next.unit.cost, now));
    }
    at = Math.min(at, earliestBudgetRoll(s));
  }
  return at === Infinity ? null : Math.max(at, now);
}

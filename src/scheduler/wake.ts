import { fleetCap, inFlightTokens } from './admission';
import type { CoreState } from './core';
import { earliestBudgetRoll } from './eligibility';
import { earliestLingerEnd } from './lingers';
import { breakerProbeAt } from './breaker';
import { bucketReadyAt, isPaused } from './governor';
import { fleetHeldFor, overInFlightTokens } from './pass-over';
import type { QueuedUnit } from './queue-state';
import { laneMayTake } from './reserve';

/**
 * Earliest instant at which admit() or expireLeases() could decide differently
 * without any new message: the nearest lease expiry; and, when work is queued and
 * the fleet is open, the end of a governor pause, the token bucket covering the
 * cheapest unit that may go next (or the unit the fleet is held for), the key breaker's next
 * probe, the budget period roll of a tenant withheld by its budget, or the end of a lingering
 * reservation (`lingers.ts`). A value equal to `now` means "due
 * already". Null when nothing is pending (pure).
 */
export function nextWakeAt(s: CoreState, now: number): number | null {
  // A linger's end frees budget and shows in the ledger: due whether or not work is queued.
  let at = Math.min(s.leases.earliest()?.expiresAt ?? Infinity, earliestLingerEnd(s));
  if (!s.draining && s.queued.size > 0) {
    const g = s.governor;
    const probeAt = breakerProbeAt(g.breaker);
    if (probeAt !== null && probeAt > now) {
      at = Math.min(at, isPaused(g, now) ? Math.max(probeAt, g.pausedUntil) : probeAt);
    } else if (isPaused(g, now)) {
      at = Math.min(at, g.pausedUntil);
    } else if (s.leases.size < fleetCap(s)) {
      const cost = cheapestNext(s, now);
      if (cost !== null) at = Math.min(at, bucketReadyAt(g, cost, now));
    }
    at = Math.min(at, earliestBudgetRoll(s));
  }
  return at === Infinity ? null : Math.max(at, now);
}

/**
 * The cost of the cheapest head unit that only the bucket keeps out: of the unit the fleet is held
 * for, else of every admissible flow in a lane that may take a slot. A unit over the tokens in
 * flight waits for a charge or a release, not for time. O(flows): for the wake-up only.
 */
function cheapestNext(s: CoreState, now: number): number | null {
  const inFlight = inFlightTokens(s);
  const cap = fleetCap(s);
  const held = fleetHeldFor(s, now);
  const heads: QueuedUnit[] = [];
  if (held !== null) {
    if (laneMayTake(s, held.lane, cap)) heads.push(held);
  } else {
    for (const q of s.lanes)
      if (laneMayTake(s, q.lane, cap))
        for (const f of q.heap.items()) heads.push(f.units[f.head] as QueuedUnit);
  }
  let min: number | null = null;
  for (const u of heads)
    if (!overInFlightTokens(s, inFlight, u.cost) && (min === null || u.cost < min)) min = u.cost;
  return min;
}

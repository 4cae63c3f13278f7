import { POOL_LOOKAHEAD, fleetCap, inFlightTokens } from './admission';
import type { CoreState } from './core';
import { earliestBudgetRoll } from './eligibility';
import { earliestLingerEnd } from './lingers';
import { breakerProbeAt } from './breaker';
import { bucketReadyAt, isPaused } from './governor';
import type { GovernorState } from './governor';
import { allPools, overPoolInFlight, poolCap, poolInFlightTokens } from './pools';
import { heldUnits } from './pass-over';
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
    const tokens = poolInFlightTokens(s, inFlightTokens);
    const fleet: FleetNow = { cap: fleetCap(s), held: heldUnits(s, now) };
    for (const [pool, g] of allPools(s))
      at = Math.min(at, poolWakeAt(s, fleet, pool, g, tokens.get(pool) ?? 0, now));
    at = Math.min(at, earliestBudgetRoll(s));
  }
  return at === Infinity ? null : Math.max(at, now);
}

/** The fleet's slots in force and the unit a pool is held for, read once per wake-up. */
interface FleetNow {
  cap: number;
  held: QueuedUnit[];
}

/** When model pool `pool` (governor `g`, `inFlight` tokens) may next admit without a new message; Infinity: not by time. */
function poolWakeAt(
  s: CoreState,
  fleet: FleetNow,
  pool: string,
  g: GovernorState,
  inFlight: number,
  now: number,
): number {
  const probeAt = breakerProbeAt(g.breaker);
  if (probeAt !== null && probeAt > now) return isPaused(g, now) ? Math.max(probeAt, g.pausedUntil) : probeAt;
  if (isPaused(g, now)) return g.pausedUntil;
  if (s.leases.size < fleet.cap && s.leases.inPool(pool) < poolCap(s, pool)) {
    const cost = cheapestNext(s, fleet, pool, inFlight);
    if (cost !== null) return bucketReadyAt(g, cost, now);
  }
  return Infinity;
}

/**
 * The cost of the cheapest unit of `pool` that only its bucket keeps out: of the unit the pool is
 * held for, else of the first unit of `pool` within POOL_LOOKAHEAD of the head of every admissible
 * flow in a lane that may take a slot (`admit` takes it when the head's pool admits nothing). A
 * unit over the tokens in flight waits for a charge or a release, not for time. O(flows): for the
 * wake-up only.
 */
function cheapestNext(s: CoreState, { cap, held }: FleetNow, pool: string, inFlight: number): number | null {
  const heads: QueuedUnit[] = [];
  const own = held.find((u) => u.pool === pool);
  if (own !== undefined) {
    if (laneMayTake(s, own.lane, cap)) heads.push(own);
  } else {
    for (const q of s.lanes)
      if (laneMayTake(s, q.lane, cap))
        for (const f of q.heap.items()) {
          const end = Math.min(f.units.length, f.head + 1 + (s.pools.size > 0 ? POOL_LOOKAHEAD : 0));
          for (let i = f.head; i < end; i++) {
            const u = f.units[i] as QueuedUnit;
            if (u.live && u.pool === pool) {
              heads.push(u);
              break;
            }
          }
        }
  }
  let min: number | null = null;
  for (const u of heads)
    if (!overPoolInFlight(s, pool, inFlight, u.cost) && (min === null || u.cost < min)) min = u.cost;
  return min;
}

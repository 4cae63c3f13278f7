import type { CoreState } from './core';
import { refreshTenant, wakeBudgetParked } from './eligibility';
import { canTake, concurrencyCap, inFlightTokenCap, isPaused, refill, take } from './governor';
import { admissibleLanes, chargeCredits } from './lanes';
import { reserve } from './ledger';
import { toAdmission } from './leases';
import type { Flow, Lease, QueuedUnit } from './queue-state';
import { recordEvents } from './rate';
import { pickLane } from './reserve';
import { touchLedger } from './tenants';
import { PRIORITIES } from './types';
import type { Admission } from './types';

/** Fleet concurrency in force: the operator's setting or the governor's, whichever is lower. */
export function fleetCap(s: CoreState): number {
  return Math.min(s.settings.concurrency, concurrencyCap(s.governor));
}

/** Tokens reserved and not yet charged, over all tenants: still to be served for the units in flight. */
export function inFlightTokens(s: CoreState): number {
  let sum = 0;
  for (const t of s.tenants.values()) sum += Math.max(0, t.ledger.reserved);
  return sum;
}

/** Whether one more unit of `cost` would put more tokens in flight than the provider serves within a lease. */
export function overInFlightTokens(s: CoreState, inFlight: number, cost: number): boolean {
  return s.leases.size > 0 && inFlight + cost > inFlightTokenCap(s.governor, s.settings.leaseTtlSeconds);
}

/**
 * The unit admitted next when the bucket allows, or null when none may take a slot now (the fleet is
 * full, or only the interactive reserve is free and no interactive unit waits) (pure).
 */
export function nextCandidate(s: CoreState): { flow: Flow; unit: QueuedUnit } | null {
  const lane = pickLane(s, admissibleLanes(s), fleetCap(s));
  if (lane === null) return null;
  const flow = s.lanes[lane].top() as Flow;
  return { flow, unit: flow.units[flow.head] as QueuedUnit };
}

/**
 * Admits as many units as the limits allow at `now`, in decision order. Each
 * decision is O(log T): pick the lane (floors), pop the lane's top flow, re-key it.
 * When the chosen unit does not fit the token bucket the round stops rather than
 * skipping to a cheaper unit, which would starve large units. Lower lanes stop short of
 * the interactive reserve (`reserve.ts`).
 */
export function admit(s: CoreState, now: number, max: number): Admission[] {
  const out: Admission[] = [];
  if (s.draining || !(max > 0)) return out;
  wakeBudgetParked(s, now);
  const g = s.governor;
  if (isPaused(g, now)) return out;
  refill(g, now);
  const cap = fleetCap(s);
  let inFlight = inFlightTokens(s);
  while (out.length < max && s.leases.size < cap) {
    const avail = admissibleLanes(s);
    // The last slots are the interactive lane's: a lower lane's pick (even one owed its floor) waits.
    const lane = pickLane(s, avail, cap);
    if (lane === null) break;
    const q = s.lanes[lane];
    const f = q.top() as Flow;
    const head = f.units[f.head] as QueuedUnit;
    if (!canTake(g, head.cost)) break;
    if (overInFlightTokens(s, inFlight, head.cost)) break;
    inFlight += head.cost;
    take(g, head.cost);
    q.serve(f);
    chargeCredits(s, lane, avail);
    out.push(grant(s, head, now));
  }
  return out;
}

function grant(s: CoreState, u: QueuedUnit, now: number): Admission {
  const t = u.tenant;
  s.queued.delete(u.runId);
  s.queuedCost -= u.cost;
  t.queued--;
  t.queuedCost -= u.cost;
  touchLedger(s, t, now);
  reserve(t.ledger, u.cost);
  s.log.append(t.id, now, u.runId, 'reserve', u.cost);
  t.inFlight++;
  const lease: Lease = {
    runId: u.runId,
    tenant: t,
    lane: u.lane,
    attempt: u.attempt,
    seq: ++s.seq,
    admittedAt: now,
    expiresAt: now + s.settings.leaseTtlSeconds * 1000,
    reserved: u.cost,
    used: 0,
    charged: 0,
    perCall: false,
    hi: -1,
  };
  s.leases.add(lease);
  recordEvents(t.rate, now);
  t.seenAt = Math.max(t.seenAt, now);
  recordEvents(s.fleetRate, now);
  s.counters.admitted++;
  s.counters.admittedByPriority[PRIORITIES[u.lane]]++;
  refreshTenant(s, t);
  return toAdmission(lease);
}

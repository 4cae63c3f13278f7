import type { CoreState } from './core';
import { refreshTenant, wakeBudgetParked } from './eligibility';
import { breakerGate, probeSent } from './breaker';
import { concurrencyCap, isPaused, refill, take } from './governor';
import { admissibleLanes, chargeCredits } from './lanes';
import { reserve } from './ledger';
import { toAdmission } from './leases';
import type { Flow, Lease, QueuedUnit } from './queue-state';
import { recordEvents } from './rate';
import { admitted, endPassing, fitsNow, fleetHeldFor, passOver } from './pass-over';
import { laneMayTake, pickLane } from './reserve';
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

export { PASS_OVER_BOUND_MS, overInFlightTokens } from './pass-over';

/**
 * Admits as many units as the limits allow at `now`, in decision order. Each
 * decision is O(log T): pick the lane (floors), pop the lane's top flow, re-key it.
 * A head unit that does not fit the token bucket or the tokens in flight now is passed
 * over for the round (smaller units, other tenants and lanes go on); once a unit has
 * been passed over for PASS_OVER_BOUND_MS the fleet is held for it, so large units are
 * not starved (`pass-over.ts`). Lower lanes stop short of the interactive reserve (`reserve.ts`).
 * An open key breaker admits nothing, or one probe unit once its backoff has passed (`breaker.ts`).
 */
export function admit(s: CoreState, now: number, max: number): Admission[] {
  const gate = breakerGate(s.governor.breaker, now);
  if (gate === 'all') return admitUpTo(s, now, max, true);
  const out = admitUpTo(s, now, Math.min(1, max), gate === 'one');
  if (out.length > 0) probeSent(s.governor.breaker!, now);
  return out;
}

/** Admits up to `max` units; with `open` false (the breaker shut) it only wakes budget-parked tenants. */
function admitUpTo(s: CoreState, now: number, max: number, open: boolean): Admission[] {
  const out: Admission[] = [];
  if (s.draining || !(max > 0)) return out;
  wakeBudgetParked(s, now);
  const g = s.governor;
  if (isPaused(g, now) || !open) return out;
  refill(g, now);
  const cap = fleetCap(s);
  let tokens = inFlightTokens(s);
  // The fleet is held for a unit passed over too long: nothing else goes before it.
  const held = fleetHeldFor(s, now);
  if (held !== null) {
    if (!(s.leases.size < cap && laneMayTake(s, held.lane, cap) && fitsNow(s, tokens, held.cost))) return out;
    out.push(serveUnit(s, held.tenant.flows[held.lane], admissibleLanes(s), now));
    tokens += held.cost;
  }
  const passed: Flow[] = [];
  while (out.length < max && s.leases.size < cap) {
    const avail = admissibleLanes(s);
    // The last slots are the interactive lane's: a lower lane's pick (even one owed its floor) waits.
    const lane = pickLane(s, avail, cap);
    if (lane === null) break;
    const f = s.lanes[lane].top() as Flow;
    const head = f.units[f.head] as QueuedUnit;
    if (!fitsNow(s, tokens, head.cost)) {
      passOver(s, f, head, now, passed);
      continue;
    }
    tokens += head.cost;
    out.push(serveUnit(s, f, avail, now));
  }
  endPassing(s, passed);
  return out;
}

/** Admits the head unit of `f` (a flow in its lane's heap), given which lanes were admissible before. */
function serveUnit(s: CoreState, f: Flow, avail: readonly boolean[], now: number): Admission {
  const head = f.units[f.head] as QueuedUnit;
  take(s.governor, head.cost);
  s.lanes[f.lane].serve(f);
  chargeCredits(s, f.lane, avail);
  admitted(s, head);
  return grant(s, head, now);
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

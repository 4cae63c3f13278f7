import type { CoreState } from './core';
import { refreshTenant, wakeBudgetParked } from './eligibility';
import { breakerGate, probeSent } from './breaker';
import { canTake, concurrencyCap, isPaused, refill, take } from './governor';
import { allPools, governorOf, overPoolInFlight, poolCap, poolInFlightTokens } from './pools';
import { admissibleLanes, chargeCredits } from './lanes';
import { promote } from './fair-queue';
import { remaining, reserve } from './ledger';
import { toAdmission } from './leases';
import type { Flow, Lease, QueuedUnit } from './queue-state';
import { recordEvents } from './rate';
import { admitted, endPassing, heldUnits, passOver, sitOut } from './pass-over';
import { laneMayTake, pickLane } from './reserve';
import { touchLedger } from './tenants';
import { PRIORITIES } from './types';
import type { Admission } from './types';

/**
 * Fleet concurrency in force: the operator's setting or the slots the pools' governors allow
 * together, whichever is lower (with the default pool alone: its governor's).
 */
export function fleetCap(s: CoreState): number {
  let slots = 0;
  for (const [, g] of allPools(s)) slots += concurrencyCap(g);
  return Math.min(s.settings.concurrency, slots);
}

/** Tokens reserved and not yet charged, over all tenants: still to be served for the units in flight. */
export function inFlightTokens(s: CoreState): number {
  let sum = 0;
  for (const t of s.tenants.values()) sum += Math.max(0, t.ledger.reserved);
  return sum;
}

export { PASS_OVER_BOUND_MS } from './pass-over';

/** A pool's gate for one round: open, one probe unit (its key breaker half-open), or closed. */
type PoolGate = 'open' | 'one';

/** The pools that may admit this round (not paused, breaker not shut), refilled to `now`. */
function openPools(s: CoreState, now: number): Map<string, PoolGate> {
  const open = new Map<string, PoolGate>();
  for (const [name, g] of allPools(s)) {
    const gate = breakerGate(g.breaker, now);
    if (gate === 'none' || isPaused(g, now)) continue;
    refill(g, now);
    open.set(name, gate === 'one' ? 'one' : 'open');
  }
  return open;
}

/** Whether a unit of `pool` may take a slot of its pool and fits its bucket and tokens in flight. */
function poolFits(s: CoreState, pool: string, tokens: Map<string, number>, cost: number): boolean {
  return (
    s.leases.inPool(pool) < poolCap(s, pool) &&
    canTake(governorOf(s, pool), cost) &&
    !overPoolInFlight(s, pool, tokens.get(pool) ?? 0, cost)
  );
}

/**
 * Admits as many units as the limits allow at `now`, in decision order. Each
 * decision is O(log T): pick the lane (floors), pop the lane's top flow, re-key it.
 * Each unit is admitted by its model pool's governor (`pools.ts`): a pool paused, shut by its key
 * breaker (one probe unit once its backoff has passed, `breaker.ts`) or out of slots admits
 * nothing this round, and the flows whose head is its unit sit the round out while other pools'
 * units go on. A head unit that does not fit its pool's token bucket or tokens in flight now is
 * passed over for the round (smaller units, other tenants and lanes go on); once a unit has
 * been passed over for PASS_OVER_BOUND_MS its pool is held for it, so large units are
 * not starved (`pass-over.ts`). Lower lanes stop short of the interactive reserve (`reserve.ts`).
 */
export function admit(s: CoreState, now: number, max: number): Admission[] {
  const out: Admission[] = [];
  if (s.draining || !(max > 0)) return out;
  wakeBudgetParked(s, now);
  const open = openPools(s, now);
  if (open.size === 0) return out;
  const cap = fleetCap(s);
  const tokens = poolInFlightTokens(s, inFlightTokens);
  /** A unit of `pool` and `cost` was admitted: its tokens are in flight; a probing pool admits no more this round. */
  const served = (pool: string, cost: number) => {
    tokens.set(pool, (tokens.get(pool) ?? 0) + cost);
    if (open.get(pool) === 'one') {
      open.delete(pool);
      probeSent(governorOf(s, pool).breaker!, now);
    }
  };
  // A pool is held for its unit passed over too long: nothing else of it goes before that unit.
  for (const held of heldUnits(s, now)) {
    if (!open.has(held.pool)) continue;
    if (
      out.length < max &&
      s.leases.size < cap &&
      laneMayTake(s, held.lane, cap) &&
      poolFits(s, held.pool, tokens, held.cost)
    ) {
      out.push(serveUnit(s, held.tenant.flows[held.lane], admissibleLanes(s), now));
      served(held.pool, held.cost);
    } else open.delete(held.pool);
  }
  if (open.size === 0) return out;
  const passed: Flow[] = [];
  while (out.length < max && s.leases.size < cap) {
    const avail = admissibleLanes(s);
    // The last slots are the interactive lane's: a lower lane's pick (even one owed its floor) waits.
    const lane = pickLane(s, avail, cap);
    if (lane === null) break;
    const f = s.lanes[lane].top() as Flow;
    const head = f.units[f.head] as QueuedUnit;
    if (!open.has(head.pool) || s.leases.inPool(head.pool) >= poolCap(s, head.pool)) {
      // Its pool admits nothing more this round: other pools' units go on, if any pool still may;
      // the first of the tenant's own that fits now takes this turn of its flow.
      open.delete(head.pool);
      if (open.size === 0) break;
      const left = remaining(f.tenant.ledger);
      const i = behindHead(
        s,
        f,
        (u) => u.cost <= left && open.has(u.pool) && poolFits(s, u.pool, tokens, u.cost),
      );
      if (i < 0) {
        sitOut(s, f, passed);
        continue;
      }
      promote(f, i);
      const unit = f.units[f.head] as QueuedUnit;
      out.push(serveUnit(s, f, avail, now));
      served(unit.pool, unit.cost);
      continue;
    }
    if (!poolFits(s, head.pool, tokens, head.cost)) {
      passOver(s, f, head, now, passed);
      continue;
    }
    out.push(serveUnit(s, f, avail, now));
    served(head.pool, head.cost);
  }
  endPassing(s, passed);
  return out;
}

/**
 * How far behind a flow's head admission looks for a unit of another pool when the head's pool
 * admits nothing: a tenant's units of other pools further back wait for the head.
 */
export const POOL_LOOKAHEAD = 32;

/**
 * Index of the first live unit within POOL_LOOKAHEAD behind `f`'s head that is the first of its
 * pool there and `fits`, or -1: each pool's units keep their order.
 */
function behindHead(s: CoreState, f: Flow, fits: (u: QueuedUnit) => boolean): number {
  if (s.pools.size === 0) return -1;
  const seen = new Set<string>([(f.units[f.head] as QueuedUnit).pool]);
  const end = Math.min(f.units.length, f.head + 1 + POOL_LOOKAHEAD);
  for (let i = f.head + 1; i < end && seen.size <= s.pools.size; i++) {
    const u = f.units[i] as QueuedUnit;
    if (!u.live || seen.has(u.pool)) continue;
    seen.add(u.pool);
    if (fits(u)) return i;
  }
  return -1;
}

/** Admits the head unit of `f` (a flow in its lane's heap), given which lanes were admissible before. */
function serveUnit(s: CoreState, f: Flow, avail: readonly boolean[], now: number): Admission {
  const head = f.units[f.head] as QueuedUnit;
  take(governorOf(s, head.pool), head.cost);
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
    pool: u.pool,
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

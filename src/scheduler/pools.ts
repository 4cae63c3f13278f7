import type { CoreState } from './core';
import { concurrencyCap, inFlightTokenCap, newGovernor } from './governor';
import type { GovernorState } from './governor';
import type { GovernorParams } from './types';
import { POOL_NAME_PATTERN } from './limits';

/**
 * Model pools. A provider limits each model (or model family) on its own: each pool has its own
 * governor (slots, requests and tokens a minute, pauses, key breaker) that only its units use and
 * only its calls' observations move. The default pool (`DEFAULT_POOL`, `CoreState.governor`) takes
 * every unit and observation that names no pool; named pools get a governor the first time a unit
 * or an observation names them, up to MAX_POOLS (a name past the bound counts in the default pool).
 * With no named pool in use, admission is exactly the single governor's.
 */
export const DEFAULT_POOL = '';
/** Named pools one scheduler keeps a governor for (each adds about 1 KiB to the snapshot). */
export const MAX_POOLS = 8;

/** The pool `name` is counted in as things stand: itself when known, the default, or null when it would be a new pool. */
function countedIn(s: CoreState, name: string | undefined): string | null {
  if (name === undefined || name === DEFAULT_POOL || !POOL_NAME_PATTERN.test(name)) return DEFAULT_POOL;
  if (s.pools.has(name)) return name;
  return s.pools.size >= MAX_POOLS ? DEFAULT_POOL : null;
}

/** The pool `name` is counted in: itself when known or when there is room for it, else the default (creates it). */
export function poolFor(s: CoreState, name: string | undefined, now: number): string {
  const pool = countedIn(s, name);
  if (pool !== null) return pool;
  s.pools.set(name as string, newGovernor(s.governorParams, now));
  return name as string;
}

/** The governor `name`'s units are counted in, without creating one (pure); null: a pool not governed yet. */
export function knownGovernor(s: CoreState, name: string | undefined): GovernorState | null {
  const pool = countedIn(s, name);
  return pool === null ? null : governorOf(s, pool);
}

/** The governor parameters of `pool`: the chain's, with the pool's own quota share when it has one. */
export function paramsOf(s: CoreState, pool: string): GovernorParams {
  if (pool === DEFAULT_POOL) return s.governorParams;
  const known = s.poolParams?.get(pool);
  if (known) return known;
  const share = s.governorParams.poolQuotaShares?.[pool];
  const params =
    share === undefined || !(share > 0 && share <= 1)
      ? s.governorParams
      : { ...s.governorParams, quotaShare: share };
  (s.poolParams ??= new Map()).set(pool, params);
  return params;
}

/** The governor of `pool` (the default one for an unknown pool). */
export function governorOf(s: CoreState, pool: string): GovernorState {
  return pool === DEFAULT_POOL ? s.governor : (s.pools.get(pool) ?? s.governor);
}

/** Every pool in use with its governor: the default pool first. */
export function allPools(s: CoreState): [string, GovernorState][] {
  return [[DEFAULT_POOL, s.governor], ...s.pools];
}

/** Slots `pool`'s governor allows now. */
export function poolCap(s: CoreState, pool: string): number {
  return concurrencyCap(governorOf(s, pool));
}

/** Whether one more unit of `cost` would put more tokens in flight in `pool` than its provider serves within a lease. */
export function overPoolInFlight(s: CoreState, pool: string, inFlight: number, cost: number): boolean {
  return (
    s.leases.inPool(pool) > 0 &&
    inFlight + cost > inFlightTokenCap(governorOf(s, pool), s.settings.leaseTtlSeconds)
  );
}

/**
 * Tokens reserved and not yet consumed by each pool's leases. With no named pool, the tenants'
 * reservations (`fleetInFlight`, read only then) stand for the default pool, as they always did.
 */
export function poolInFlightTokens(
  s: CoreState,
  fleetInFlight: (s: CoreState) => number,
): Map<string, number> {
  if (s.pools.size === 0) return new Map([[DEFAULT_POOL, fleetInFlight(s)]]);
  const m = new Map<string, number>([[DEFAULT_POOL, 0]]);
  for (const l of s.leases.values())
    m.set(l.pool, (m.get(l.pool) ?? 0) + Math.max(0, l.reserved - l.charged));
  return m;
}

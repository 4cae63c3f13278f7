import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import type { Flow, QueuedUnit } from './queue-state';

/**
 * How long a unit may be passed over before the fleet is held for it. An admission round passes
 * over a head unit that does not fit now (the token bucket, or the tokens in flight), so smaller
 * units behind it, other tenants and other lanes go on. The unit passed over longest is recorded
 * per model pool (`CoreState.passedOver`); once it has waited this long, nothing else of its pool is
 * admitted until it is.
 *
 * Bound: a unit holding the fleet is admitted as soon as the units in flight when it began holding
 * have ended (or have been charged enough of their reservations) and the bucket covers it
 * (`min(cost, bucket capacity)`, with the debt of earlier units first). So it waits at most
 * PASS_OVER_BOUND_MS + the longest of those runs + that refill. Units passed over meanwhile hold
 * the fleet in turn, each from when the one before it was admitted.
 */
export const PASS_OVER_BOUND_MS = 30_000;

/** The unit of `pool` recorded as passed over longest, while it is still queued at the head of its flow and eligible. */
function waiting(s: CoreState, pool: string): QueuedUnit | null {
  const r = s.passedOver.get(pool);
  const u = r === undefined ? undefined : s.queued.get(r.runId);
  if (!u || u.pool !== pool) return null;
  const f = u.tenant.flows[u.lane];
  return f.units[f.head] === u && (f.hi >= 0 || f.passed === true) ? u : null;
}

/**
 * The units their pools are held for (each passed over for PASS_OVER_BOUND_MS and still waiting),
 * the longest waiting first (pure). A hold stops only its own pool's other units.
 */
export function heldUnits(s: CoreState, now: number): QueuedUnit[] {
  const held: { unit: QueuedUnit; since: number }[] = [];
  for (const pool of s.passedOver.keys()) {
    const h = poolHeldFor(s, pool, now);
    if (h !== null) held.push(h);
  }
  return held.sort((a, b) => a.since - b.since).map((h) => h.unit);
}

/** The unit `pool` is held for, with since when it waits, or null (pure). */
export function poolHeldFor(
  s: CoreState,
  pool: string,
  now: number,
): { unit: QueuedUnit; since: number } | null {
  const u = waiting(s, pool);
  const since = s.passedOver.get(pool)?.since ?? now;
  return u !== null && now - since >= PASS_OVER_BOUND_MS ? { unit: u, since } : null;
}

/**
 * Takes the top flow of its lane out of this round and records its head as passed
 * over, unless another unit passed over earlier still waits.
 */
export function passOver(s: CoreState, f: Flow, head: QueuedUnit, now: number, passed: Flow[]): void {
  f.passed = true;
  s.lanes[f.lane].leave(f);
  passed.push(f);
  if (waiting(s, head.pool) === null) s.passedOver.set(head.pool, { runId: head.runId, since: now });
}

/** Takes the top flow of its lane out of this round without recording it: its pool admits nothing more now. */
export function sitOut(s: CoreState, f: Flow, passed: Flow[]): void {
  f.passed = true;
  s.lanes[f.lane].leave(f);
  passed.push(f);
}

/**
 * Puts the flows passed over back into contention. A flow re-enters at its lane's virtual time at
 * the latest (as any flow does), which is no later than every tag in the heap: it stays at the front.
 */
export function endPassing(s: CoreState, passed: readonly Flow[]): void {
  for (const f of passed) {
    f.passed = false;
    refreshTenant(s, f.tenant);
  }
}

/** A unit was admitted: it no longer waits. */
export function admitted(s: CoreState, u: QueuedUnit): void {
  if (s.passedOver.get(u.pool)?.runId === u.runId) s.passedOver.delete(u.pool);
}

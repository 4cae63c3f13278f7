import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { finiteSum } from './ledger';
import type { Lease, TenantState } from './queue-state';

/*
 * Lingers: the reservation of a budgeted tenant's expired leases whose calls may still be under way. An
 * expiry does not prove the attempt stopped (its worker may be paused or cut off, its calls still
 * served and billed, their charges still on their way), so what the lease had reserved and not been
 * charged stays reserved: a charge of the tenant that no lease holds consumes it first, and
 * `spent + reserved ≤ budget` holds through the expiry (the run reserves each call's worst case
 * before it goes, so the linger covers every call of the attempt not charged yet). It ends
 * `LINGER_LEASE_TTLS` lease TTLs after the tenant's last expiry: by then a live worker's calls have
 * ended, and a dead worker's were charged by the call-charge sweep (`CHARGE_OWNER_DEAD_SECONDS`); a
 * charge later still is booked without one. A run's next attempt reserves its steps still under way
 * again: held twice until the linger ends, never short. One linger a tenant, at most `MAX_LINGERS`
 * tenants (the snapshot's bound): past it the oldest ends first.
 */

/** How many lease TTLs an expired lease's reservation lingers. */
export const LINGER_LEASE_TTLS = 2;
/** Tenants with a linger at most. */
export const MAX_LINGERS = 64;

/** Keeps `tokens` an expiring lease reserved and was not charged, for its calls still under way. */
export function holdLinger(s: CoreState, l: Lease, tokens: number, now: number): void {
  const t = l.tenant;
  if (!(tokens > 0) || t.ledger.budget === null) return;
  const until = now + LINGER_LEASE_TTLS * s.settings.leaseTtlSeconds * 1000;
  t.ledger.reserved = finiteSum(t.ledger.reserved, tokens);
  const had = s.lingers.get(t.id);
  // Re-inserted: the Map's order is the order of the last expiry, the first the oldest.
  s.lingers.delete(t.id);
  s.lingers.set(t.id, {
    tenant: t,
    tokens: finiteSum(had?.tokens ?? 0, tokens),
    until: Math.max(had?.until ?? until, until),
  });
  while (s.lingers.size > MAX_LINGERS) freeLinger(s, s.lingers.keys().next().value as string);
}

/**
 * Takes up to `tokens` out of tenant `t`'s linger for a charge no lease holds; answers how many, which
 * the caller moves from the ledger's `reserved` to its `spent`.
 */
export function consumeLinger(s: CoreState, t: TenantState, tokens: number): number {
  const g = s.lingers.get(t.id);
  if (!g || g.tenant !== t) return 0;
  const from = Math.min(g.tokens, tokens);
  g.tokens -= from;
  if (g.tokens <= 0) s.lingers.delete(t.id);
  return from;
}

/** Ends the linger of tenant `id`: its tokens are free again (a reservation outlives a period's roll). */
function freeLinger(s: CoreState, id: string): void {
  const g = s.lingers.get(id);
  if (!g) return;
  s.lingers.delete(id);
  g.tenant.ledger.reserved = finiteSum(g.tenant.ledger.reserved, -g.tokens);
  refreshTenant(s, g.tenant);
}

/** Ends the lingers due at `now`. */
export function freeDueLingers(s: CoreState, now: number): void {
  for (const [id, g] of s.lingers) if (g.until <= now) freeLinger(s, id);
}

/** The earliest end of a linger, or Infinity. */
export function earliestLingerEnd(s: CoreState): number {
  let at = Infinity;
  for (const g of s.lingers.values()) at = Math.min(at, g.until);
  return at;
}

/** Restores the lingers of a snapshot, oldest first (by end). */
export function restoreLingers(s: CoreState, lingers: Iterable<[TenantState, number, number]>): void {
  const list = [...lingers].filter(([, tokens]) => tokens > 0).sort((a, b) => a[2] - b[2]);
  for (const [tenant, tokens, until] of list) s.lingers.set(tenant.id, { tenant, tokens, until });
}

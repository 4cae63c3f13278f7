import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { tombstone } from './fair-queue';
import { settle } from './ledger';
import { toAdmission } from './leases';
import type { Lease } from './queue-state';
import { touchLedger } from './tenants';
import type { Admission, Release, Renewal } from './types';

/** Non-negative whole tokens; garbage counts as 0. */
export function tokenCount(x: number): number {
  return Number.isFinite(x) ? Math.max(0, Math.ceil(x)) : 0;
}

/**
 * Ends a lease: the slot returns, the ledger charges `used` and frees the rest of
 * the reservation. The log entry's tokens are the tokens charged.
 */
function endLease(
  s: CoreState,
  l: Lease,
  used: number,
  now: number,
  kind: 'settle' | 'release' | 'expire',
): void {
  const t = l.tenant;
  s.leases.remove(l);
  t.inFlight--;
  touchLedger(s, t, now);
  settle(t.ledger, l.reserved, used);
  s.log.append(t.id, now, l.runId, kind, used);
  refreshTenant(s, t);
}

/** Releases finished units; unknown runs and stale attempts are ignored, so a repeat is harmless. */
export function release(s: CoreState, releases: readonly Release[], now: number): void {
  for (const r of releases) {
    const l = s.leases.get(r.runId);
    if (!l || l.attempt !== r.attempt) continue;
    const used = Math.max(l.used, tokenCount(r.usedTokens));
    if (r.outcome === 'completed') {
      s.counters.completed++;
      endLease(s, l, used, now, 'settle');
    } else {
      if (r.outcome === 'cancelled') s.counters.cancelled++;
      else s.counters.failed++;
      endLease(s, l, used, now, 'release');
    }
  }
}

/** Extends the leases of matching (runId, attempt) and records the usage reported so far. */
export function renew(s: CoreState, renewals: readonly Renewal[], now: number): void {
  for (const r of renewals) {
    const l = s.leases.get(r.runId);
    if (!l || l.attempt !== r.attempt) continue;
    l.used = Math.max(l.used, tokenCount(r.usedTokens));
    s.leases.extend(l, now + s.settings.leaseTtlSeconds * 1000);
  }
}

/** Expires one lease now: slot back, usage known from renewals charged, rest released. */
export function expireLease(s: CoreState, l: Lease, now: number): Admission {
  const a = toAdmission(l);
  s.counters.expired++;
  endLease(s, l, l.used, now, 'expire');
  return a;
}

/** Expires every lease whose expiry is at or before `now`, earliest first. */
export function expireLeases(s: CoreState, now: number): Admission[] {
  const out: Admission[] = [];
  for (let l = s.leases.earliest(); l !== undefined && l.expiresAt <= now; l = s.leases.earliest()) {
    out.push(expireLease(s, l, now));
  }
  return out;
}

/** Removes queued units (in-flight and unknown ids are skipped); returns the ids removed. */
export function cancel(s: CoreState, runIds: readonly string[]): string[] {
  const out: string[] = [];
  for (const id of runIds) {
    const u = s.queued.get(id);
    if (!u) continue;
    const t = u.tenant;
    s.queued.delete(id);
    s.queuedCost -= u.cost;
    t.queued--;
    t.queuedCost -= u.cost;
    s.lanes[u.lane].units--;
    tombstone(t.flows[u.lane], u);
    s.counters.cancelled++;
    refreshTenant(s, t);
    out.push(id);
  }
  return out;
}

import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { tombstone } from './fair-queue';
import { reserve, settle } from './ledger';
import { toAdmission } from './leases';
import type { Lane, Lease } from './queue-state';
import { touchLedger } from './tenants';
import { PRIORITIES } from './types';
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

function count(s: CoreState, outcome: Release['outcome']): void {
  if (outcome === 'completed') s.counters.completed++;
  else if (outcome === 'cancelled') s.counters.cancelled++;
  else if (outcome === 'gated') s.counters.gated++;
  else s.counters.failed++;
}

/**
 * Releases finished units (and gated ones, which are not finished). A repeat, a stale attempt or a
 * finished run is ignored. A release the core holds no lease for (the scheduler chain was lost or
 * reset meanwhile) still charges its tenant what the run used, once; an attempt whose lease expired
 * is charged only what its release reports beyond what the expiry charged.
 */
export function release(s: CoreState, releases: readonly Release[], now: number): void {
  for (const r of releases) {
    const l = s.leases.get(r.runId);
    const final = r.outcome !== 'gated';
    if (l && l.attempt === r.attempt) {
      const used = Math.max(l.used, tokenCount(r.usedTokens));
      count(s, r.outcome);
      endLease(s, l, used, now, r.outcome === 'completed' || r.outcome === 'gated' ? 'settle' : 'release');
      s.ended.record(r.runId, { attempt: r.attempt, final, charged: used });
      continue;
    }
    if (l && l.attempt > r.attempt) continue; // stale: a newer attempt holds the slot
    const t = r.tenant === undefined ? undefined : s.tenants.get(r.tenant);
    if (!t) continue;
    const e = s.ended.get(r.runId);
    if (e && (e.final || e.attempt > r.attempt)) continue;
    const charged = e && e.attempt === r.attempt ? e.charged : 0;
    const extra = Math.max(0, tokenCount(r.usedTokens) - charged);
    if (l) expireLease(s, l, now); // an older attempt's lease cannot outlive a newer attempt's release
    touchLedger(s, t, now);
    settle(t.ledger, 0, extra);
    s.log.append(t.id, now, r.runId, 'settle', extra);
    if (!e || e.attempt < r.attempt) count(s, r.outcome);
    s.ended.record(r.runId, { attempt: r.attempt, final, charged: charged + extra });
    refreshTenant(s, t);
  }
}

/**
 * Extends the leases of matching (runId, attempt) and records the usage reported so far. A renewal
 * from a running run the core holds no lease for (after the scheduler was lost or reset), which names
 * its tenant and whose attempt has not ended, puts the run back under a lease: it is running anyway,
 * and this way its slot, reservation and usage count again.
 */
export function renew(s: CoreState, renewals: readonly Renewal[], now: number): void {
  for (const r of renewals) {
    const l = s.leases.get(r.runId);
    if (l && l.attempt === r.attempt) {
      l.used = Math.max(l.used, tokenCount(r.usedTokens));
      s.leases.extend(l, now + s.settings.leaseTtlSeconds * 1000);
    } else if (!l) adopt(s, r, now);
  }
}

function adopt(s: CoreState, r: Renewal, now: number): void {
  const t = r.tenant === undefined ? undefined : s.tenants.get(r.tenant);
  const attempt = tokenCount(r.attempt);
  if (!t || s.ended.isPast(r.runId, attempt)) return;
  const queued = s.queued.get(r.runId);
  if (queued && queued.attempt > attempt) return; // it already asked for a newer attempt
  if (queued) cancel(s, [r.runId], false);
  const used = tokenCount(r.usedTokens);
  const reserved = Math.max(used, tokenCount(r.cost ?? 0));
  touchLedger(s, t, now);
  reserve(t.ledger, reserved);
  t.inFlight++;
  const lane = Math.max(0, PRIORITIES.indexOf(r.priority ?? 'standard')) as Lane;
  s.leases.add({
    runId: r.runId,
    tenant: t,
    lane,
    attempt,
    seq: ++s.seq,
    admittedAt: now,
    expiresAt: now + s.settings.leaseTtlSeconds * 1000,
    reserved,
    used,
    hi: -1,
  });
  s.counters.adopted++;
  refreshTenant(s, t);
}

/** Expires one lease now: slot back, usage known from renewals charged, rest released. */
export function expireLease(s: CoreState, l: Lease, now: number): Admission {
  const a = toAdmission(l);
  s.counters.expired++;
  endLease(s, l, l.used, now, 'expire');
  s.ended.record(l.runId, { attempt: l.attempt, final: false, charged: l.used });
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

/**
 * Removes queued units (in-flight and unknown ids are skipped); returns the ids removed. A cancelled
 * run is finished (`final`); an adopted one only leaves the queue.
 */
export function cancel(s: CoreState, runIds: readonly string[], final = true): string[] {
  const out: string[] = [];
  for (const id of runIds) {
    const u = s.queued.get(id);
    if (!u) continue;
    if (final) s.ended.record(id, { attempt: u.attempt, final: true, charged: 0 });
    const t = u.tenant;
    s.queued.delete(id);
    s.queuedCost -= u.cost;
    t.queued--;
    t.queuedCost -= u.cost;
    s.lanes[u.lane].units--;
    tombstone(t.flows[u.lane], u);
    if (final) s.counters.cancelled++;
    refreshTenant(s, t);
    out.push(id);
  }
  return out;
}

import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { tombstone } from './fair-queue';
import { recordSettled } from './governor';
import { consume, remaining, settle } from './ledger';
import { budgetRetryAfter } from './retry-after';
import { toAdmission } from './leases';
import type { Lease } from './queue-state';
import { touchLedger } from './tenants';
import type { Admission, Charge, Release, Renewal, TopUpResult } from './types';

/** Non-negative whole tokens; garbage counts as 0. */
export function tokenCount(x: number): number {
  return Number.isFinite(x) ? Math.max(0, Math.ceil(x)) : 0;
}

/** The part of a lease's reservation its per-call charges have not consumed yet. */
const unconsumed = (l: Lease) => Math.max(0, l.reserved - l.charged);

/**
 * Ends a lease: the slot returns and the rest of the reservation is freed. A lease charged call by
 * call owes nothing more; otherwise (older workers) `used` is charged, less what calls already were.
 * The log entry's tokens are the tokens charged here.
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
  const extra = l.perCall ? 0 : Math.max(0, used - l.charged);
  recordSettled(s.governor, now, l.reserved, l.charged + extra);
  settle(t.ledger, unconsumed(l), extra);
  s.log.append(t.id, now, l.runId, kind, extra);
  refreshTenant(s, t);
}

/**
 * Books what the provider billed. A charge of the lease that holds consumes its reservation first;
 * any other (a late call of an expired attempt, a call after the release) is booked all the same:
 * the tokens were spent. Unknown tenants and non-positive amounts are ignored.
 */
export function charge(s: CoreState, charges: readonly Charge[], now: number): void {
  for (const c of charges) {
    const tokens = tokenCount(c.tokens);
    if (tokens === 0) continue;
    const l = s.leases.get(c.runId);
    const held = l !== undefined && l.attempt === c.attempt && l.tenant.id === c.tenant ? l : undefined;
    const t = held?.tenant ?? s.tenants.get(c.tenant);
    if (!t) continue;
    touchLedger(s, t, now);
    let fromReservation = 0;
    if (held) {
      const before = unconsumed(held);
      held.charged += tokens;
      held.perCall = true;
      fromReservation = before - unconsumed(held);
    }
    consume(t.ledger, fromReservation, tokens);
    s.log.append(t.id, now, c.runId, 'charge', tokens);
    refreshTenant(s, t);
  }
}

/**
 * A run asks for `tokens` more than its reservation (a step whose maximum would overrun it). Granted
 * only when the tenant's budget covers it, so `spent ≤ budget` holds for everything reserved first.
 */
export function topUp(
  s: CoreState,
  runId: string,
  attempt: number,
  tokens: number,
  now: number,
): TopUpResult {
  const l = s.leases.get(runId);
  const t = l?.tenant;
  const want = tokenCount(tokens);
  if (!l || !t || l.attempt !== attempt)
    return { granted: false, code: 'no_lease', remaining: 0, retryAfterSeconds: 0 };
  touchLedger(s, t, now);
  const left = remaining(t.ledger);
  if (want > left)
    return {
      granted: false,
      code: 'budget_exhausted',
      remaining: Math.max(0, left),
      retryAfterSeconds: budgetRetryAfter(t.ledger, now),
    };
  // The new tokens are unconsumed reservation from now on, whatever the lease charged before.
  const before = unconsumed(l);
  l.reserved = l.charged + before + want;
  t.ledger.reserved += want;
  s.log.append(t.id, now, runId, 'topup', want);
  refreshTenant(s, t);
  return { granted: true, reserved: l.reserved };
}

/** Releases finished units; unknown runs and stale attempts are ignored, so a repeat is harmless. */
export function release(s: CoreState, releases: readonly Release[], now: number): void {
  for (const r of releases) {
    const l = s.leases.get(r.runId);
    if (!l || l.attempt !== r.attempt) continue;
    const used = Math.max(l.used, tokenCount(r.usedTokens));
    if (r.perCall === true) l.perCall = true;
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
    if (r.perCall === true) l.perCall = true;
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

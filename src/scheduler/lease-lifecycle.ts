import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { tombstone } from './fair-queue';
import { meterTopUp, recordSettled, refundDebt } from './governor';
import { consume, remaining, reserve, settle } from './ledger';
import { budgetRetryAfter } from './retry-after';
import { MAX_TOKENS } from './limits';
import { chargeId } from './charge-keys';
import { consumeLinger, freeDueLingers, holdLinger } from './lingers';
import { toAdmission } from './leases';
import type { Lane, Lease } from './queue-state';
import { touchLedger } from './tenants';
import type { Ended } from './ended';
import { governorOf, paramsOf, poolFor } from './pools';
import { PRIORITIES } from './types';
import type { Admission, Charge, Release, Renewal, TopUpResult } from './types';

/**
 * Non-negative whole tokens, at most MAX_TOKENS (no run or call may report more: the ledger's sums
 * stay finite); garbage counts as 0.
 */
export function tokenCount(x: number): number {
  return Number.isFinite(x) ? Math.min(MAX_TOKENS, Math.max(0, Math.ceil(x))) : 0;
}

/** The part of a lease's reservation its per-call charges have not consumed yet. */
const unconsumed = (l: Lease) => Math.max(0, l.reserved - l.charged);

/**
 * Ends a lease: the slot returns and the rest of the reservation is freed, or, for an expiry, kept
 * for the run's calls that may still be under way (`lingers.ts`). A lease charged call by call owes
 * nothing more; otherwise (older workers) `used` is charged, less what calls already were. The log
 * entry's tokens are the tokens charged here.
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
  const g = governorOf(s, l.pool);
  recordSettled(g, paramsOf(s, l.pool), now, kind === 'settle', l.reserved, l.charged + extra);
  refundDebt(g, now, l.reserved - l.charged - extra);
  settle(t.ledger, unconsumed(l), extra);
  if (kind === 'expire') holdLinger(s, l, unconsumed(l) - extra, now);
  s.log.append(t.id, now, l.runId, kind, extra);
  refreshTenant(s, t);
}

/** A correction's signed whole tokens, within ±MAX_TOKENS; garbage counts as 0. */
const signedCount = (x: number): number => (Number.isFinite(x) ? Math.sign(x) * tokenCount(Math.abs(x)) : 0);

/**
 * Settles a provisional charge against the bill: a refund lowers `spent` (never below 0: a refund
 * that lands in a later period than its charge is that period's), an extra charge is booked as a
 * late one. Reservations do not move.
 */
function correct(s: CoreState, c: Charge, now: number): void {
  const tokens = signedCount(c.tokens);
  const t = s.tenants.get(c.tenant);
  if (tokens === 0 || !t) return;
  touchLedger(s, t, now);
  if (tokens < 0) t.ledger.spent = Math.max(0, t.ledger.spent + tokens);
  else consume(t.ledger, 0, tokens);
  s.log.append(t.id, now, c.runId, 'charge', tokens);
  refreshTenant(s, t);
}

/**
 * Books what the provider billed. A charge of the lease that holds consumes its reservation first;
 * any other (a late call of an expired attempt, a call after the release) consumes its tenant's
 * linger first (`lingers.ts`) and is booked all the same: the tokens were spent. Unknown tenants and non-positive amounts are ignored. A charge or a
 * correction with a call key is booked once per key while the key is held (`charge-keys.ts`).
 */
export function charge(s: CoreState, charges: readonly Charge[], now: number): void {
  for (const c of charges) {
    // Not from a fenced owner: the sweep that fenced it took its calls over and charges them.
    if (c.owner !== undefined && s.fencedOwners.has(c.owner)) continue;
    if (typeof c.key === 'string' && !s.chargeKeys.admit(chargeId(c.key, c.correction === true))) continue;
    if (c.correction === true) {
      correct(s, c, now);
      continue;
    }
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
    } else fromReservation = consumeLinger(s, t, tokens);
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
  meterTopUp(governorOf(s, l.pool), paramsOf(s, l.pool), now, want);
  s.log.append(t.id, now, runId, 'topup', want);
  refreshTenant(s, t);
  return { granted: true, reserved: l.reserved };
}

function count(s: CoreState, outcome: Release['outcome']): void {
  if (outcome === 'completed') s.counters.completed++;
  else if (outcome === 'cancelled') s.counters.cancelled++;
  else if (outcome === 'gated') s.counters.gated++;
  else s.counters.failed++;
}

/** What a lease ending with `used` reported tokens has charged its tenant in all. */
const chargedAtEnd = (l: Lease, used: number) => (l.perCall ? l.charged : Math.max(used, l.charged));

/**
 * Releases finished units (and gated ones, which are not finished). A repeat, a stale attempt or a
 * finished run is ignored (outside a recovery, also one the core forgot). A release
 * the core holds no lease for (the scheduler chain was lost or reset meanwhile) still charges its tenant what the run used, once; an attempt whose lease expired
 * is charged only what its release reports beyond what the expiry charged. A `perCall` release
 * charges nothing more: its calls were charged one by one.
 */
export function release(s: CoreState, releases: readonly Release[], now: number): void {
  for (const r of releases) {
    const l = s.leases.get(r.runId);
    const final = r.outcome !== 'gated';
    if (l && l.attempt === r.attempt) {
      const used = Math.max(l.used, tokenCount(r.usedTokens));
      if (r.perCall === true) l.perCall = true;
      count(s, r.outcome);
      endLease(s, l, used, now, r.outcome === 'completed' || r.outcome === 'gated' ? 'settle' : 'release');
      s.ended.record(r.runId, { attempt: r.attempt, final, charged: chargedAtEnd(l, used) });
      continue;
    }
    if (l && l.attempt > r.attempt) continue; // stale: a newer attempt holds the slot
    const t = r.tenant === undefined ? undefined : s.tenants.get(r.tenant);
    if (!t) continue;
    const e = s.ended.get(r.runId);
    if (e && (e.final || e.attempt > r.attempt)) continue;
    if (forgotten(s, r, e)) continue;
    const charged = e && e.attempt === r.attempt ? e.charged : 0;
    const extra = r.perCall === true ? 0 : Math.max(0, tokenCount(r.usedTokens) - charged);
    if (l) expireLease(s, l, now); // an older attempt's lease cannot outlive a newer attempt's release
    touchLedger(s, t, now);
    settle(t.ledger, 0, extra);
    s.log.append(t.id, now, r.runId, 'settle', extra);
    if (countsWithoutLease(s, r, e)) count(s, r.outcome);
    s.ended.record(r.runId, { attempt: r.attempt, final, charged: charged + extra });
    refreshTenant(s, t);
  }
}

/**
 * Outside a recovery: a release the core holds neither a lease nor a memory of its
 * attempt for. This chain admitted every attempt of its runs, so that attempt ended here and was
 * forgotten since; the message is a repeat (a run's last workflow task ran its release again after
 * `ended` forgot the run): counted and charged already, it changes nothing.
 */
function forgotten(s: CoreState, r: Release, e: Ended | undefined): boolean {
  return admittedAllItsRuns(s) && !(e && e.attempt === r.attempt);
}

/**
 * Outside a recovery: this chain admitted every run that can still be going, so a
 * message about a run it holds no lease for is a repeat from a run whose end it forgot.
 */
const admittedAllItsRuns = (s: CoreState): boolean => s.recoverySince === null;

/**
 * Whether a release of an attempt the core holds no lease for counts its outcome: when the core
 * remembers no end of that attempt or a later one (the chain lost it), or when
 * it finishes the run on the attempt whose lease expired (the run's one end: nothing counted it).
 */
function countsWithoutLease(s: CoreState, r: Release, e: Ended | undefined): boolean {
  if (!e || e.attempt < r.attempt) return true;
  return !e.final && r.outcome !== 'gated';
}

/**
 * Extends the leases of matching (runId, attempt) and records the usage reported so far. A renewal
 * from a running run the core holds no lease for (after the scheduler was lost or reset), which names
 * its tenant and whose attempt has not ended, puts the run back under a lease: it is running anyway,
 * and this way its slot, reservation and usage count again. Only while the chain
 * recovers: otherwise it admitted every run still going, and the renewal is a repeat of a run whose
 * end it forgot.
 */
export function renew(s: CoreState, renewals: readonly Renewal[], now: number): void {
  for (const r of renewals) {
    const l = s.leases.get(r.runId);
    if (l && l.attempt === r.attempt) {
      l.used = Math.max(l.used, tokenCount(r.usedTokens));
      if (r.perCall === true) l.perCall = true;
      s.leases.extend(l, now + s.settings.leaseTtlSeconds * 1000);
    } else if (!l) adopt(s, r, now);
  }
}

function adopt(s: CoreState, r: Renewal, now: number): void {
  const t = r.tenant === undefined ? undefined : s.tenants.get(r.tenant);
  const attempt = tokenCount(r.attempt);
  if (!t || s.ended.isPast(r.runId, attempt)) return;
  // A renewal from a run whose end this chain forgot (its last workflow task ran its step again).
  if (admittedAllItsRuns(s)) return;
  const queued = s.queued.get(r.runId);
  if (queued && queued.attempt > attempt) return; // it already asked for a newer attempt
  if (queued) cancel(s, [r.runId], false);
  const used = tokenCount(r.usedTokens);
  const reserved = Math.max(used, tokenCount(r.cost ?? 0));
  // A run charged call by call has paid for `used` already: only the rest is held in reserve.
  const perCall = r.perCall === true;
  const charged = perCall ? used : 0;
  touchLedger(s, t, now);
  reserve(t.ledger, reserved - charged);
  // It paid into the ledger this chain lost: under a budget it is counted here, or the budget would
  // cover those tokens twice until the run closes and a later usage floor finds them (a floor counts
  // closed runs only). Without a budget the floor settles it: counting here may count twice what the
  // lost chain's last reports also bring (scheduler-loss drill: `spent` up to 10 % above the bill).
  if (charged > 0 && t.ledger.budget !== null) {
    consume(t.ledger, 0, charged);
    s.log.append(t.id, now, r.runId, 'charge', charged);
  }
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
    charged,
    perCall,
    hi: -1,
    pool: poolFor(s, r.pool, now),
  });
  s.counters.adopted++;
  refreshTenant(s, t);
}

/** Expires one lease now: slot back, usage known from renewals charged, rest released. */
export function expireLease(s: CoreState, l: Lease, now: number): Admission {
  const a = toAdmission(l);
  s.counters.expired++;
  endLease(s, l, l.used, now, 'expire');
  s.ended.record(l.runId, { attempt: l.attempt, final: false, charged: chargedAtEnd(l, l.used) });
  return a;
}

/** Expires every lease whose expiry is at or before `now`, earliest first, and ends lingers due. */
export function expireLeases(s: CoreState, now: number): Admission[] {
  freeDueLingers(s, now);
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

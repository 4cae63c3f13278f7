import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { pushUnit } from './fair-queue';
import { knownGovernor, poolFor } from './pools';
import type { GovernorState } from './governor';
import { finiteSum, remaining, remainingAt } from './ledger';
import { expireLease, tokenCount } from './lease-lifecycle';
import type { Lane, QueuedUnit, TenantState } from './queue-state';
import {
  budgetRetryAfter,
  clampSeconds,
  drainingRetryAfter,
  fleetAdmissionRate,
  governedTenantRate,
  secondsToDrain,
  tenantAdmissionRate,
} from './retry-after';
import { withRetryHeadroom } from './limits';
import { touchLedger } from './tenants';
import { PRIORITIES } from './types';
import type { Refusal, Refused, ShedCode, SubmitResult, UnitSubmission } from './types';

/** Per-call memo: the k-th unit shed for the same reason waits for k more admissions, not 1. */
class DoorCall {
  private shedCounts: Map<TenantState, number> | null = null;
  globalShed = 0;
  private weight: number | null = null;
  private drainWait: number | null = null;
  constructor(
    private readonly s: CoreState,
    private readonly now: number,
  ) {}

  /** O(in flight), so computed once per call. */
  drainingRetryAfter(): number {
    this.drainWait ??= drainingRetryAfter(this.s, this.now);
    return this.drainWait;
  }

  /** Σ weights of tenants with backlog, O(tenants), so computed once per call. */
  backloggedWeight(): number {
    if (this.weight === null) {
      this.weight = 0;
      for (const t of this.s.tenants.values()) if (t.queued > 0) this.weight += t.settings.weight;
    }
    return this.weight;
  }

  /** Counts a shed of this tenant's unit in this call; returns k for the k-th. */
  shedOf(t: TenantState): number {
    this.shedCounts ??= new Map();
    const k = (this.shedCounts.get(t) ?? 0) + 1;
    this.shedCounts.set(t, k);
    return k;
  }
}

/**
 * The door. Retries (attempt > 0) of runs that were already admitted once skip the budget check
 * and a 'refuse' drain, and may queue past `maxQueued` and `globalMaxQueued`: that work was
 * accepted before. But only within a bounded headroom (`withRetryHeadroom`), so the queue has a
 * hard bound; beyond it a retry is shed with queue_full and offers itself again after Retry-After.
 */
export function submit(s: CoreState, units: readonly UnitSubmission[], now: number): SubmitResult[] {
  const call = new DoorCall(s, now);
  return units.map((u) => submitOne(s, u, now, call));
}

/** A scheduler that lost its tenants gets them back from the API within seconds; retrying sooner only spins. */
export const UNKNOWN_TENANT_RETRY_SECONDS = 5;

function submitOne(s: CoreState, u: UnitSubmission, now: number, call: DoorCall): SubmitResult {
  const runId = u.runId;
  const attempt = tokenCount(u.attempt ?? 0);
  // A run that finished, or an attempt that already ended, is never queued again: the repeat is
  // answered as the duplicate it is (a retried update or batch chunk must not re-admit it). A
  // re-drive (a new execution of a failed run) starts past every attempt of the failed one, so no
  // late message of that execution can end the new one's lease; a repeat of it, once the new
  // execution's attempt ended too, is a duplicate like any other.
  const ended = s.ended.get(runId);
  const redrive = u.redrive === true && (ended === undefined || ended.attempt < attempt);
  if (redrive) s.ended.forget(runId);
  else if (s.ended.isPast(runId, attempt)) return { runId, accepted: true, duplicate: true, held: false };
  const t = s.tenants.get(u.tenant);
  if (!t) return { runId, accepted: false, ...unknownTenant(u.tenant) };
  t.seenAt = Math.max(t.seenAt, now);
  const queued = s.queued.get(runId);
  if (queued) {
    if (attempt <= queued.attempt) return { runId, accepted: true, duplicate: true, held: s.draining };
    // A newer attempt of a run that is still queued keeps its place in line.
    queued.attempt = attempt;
    return { runId, accepted: true, duplicate: false, held: s.draining };
  }
  const lease = s.leases.get(runId);
  if (lease) {
    if (lease.attempt >= attempt) return { runId, accepted: true, duplicate: true, held: false };
    expireLease(s, lease, now);
  }
  const cost = Math.max(1, tokenCount(u.cost));
  // A re-drive is new work at the door (budget, drain, caps), whatever its attempt number.
  const fresh = attempt === 0 || redrive;
  const lane = laneOf(u.priority);
  const shed = fresh
    ? doorCheck(s, t, cost, now, call, 1, false, lane, knownGovernor(s, u.pool))
    : retryCheck(s, t, now, call);
  if (shed) {
    s.counters.shed++;
    return { runId, ...shed };
  }
  // A retry of a run this chain knows nothing of (no lease, no ended attempt): the chain was lost or
  // reset while it ran, and what it used was paid into the lost ledger. Under a budget it is counted,
  // or the budget would cover those tokens twice until the run closes and a later floor finds them
  // (without one the floor settles it, as for an adopted run).
  if (!fresh && !lease && t.ledger.budget !== null && s.ended.get(runId) === undefined) {
    const used = tokenCount(u.usedTokens ?? 0);
    if (used > 0) {
      touchLedger(s, t, now);
      t.ledger.spent = finiteSum(t.ledger.spent, used);
      s.log.append(t.id, now, runId, 'charge', used);
    }
  }
  enqueue(s, t, lane, runId, cost, attempt, poolFor(s, u.pool, now), u.fairnessKey ?? '');
  s.counters.submitted++;
  return { runId, accepted: true, duplicate: false, held: s.draining };
}

type Shed = Refused;

/** A retry may use the headroom above the queue caps, and no more. */
function retryCheck(s: CoreState, t: TenantState, now: number, call: DoorCall): Shed | null {
  const tenantCap = withRetryHeadroom(t.settings.maxQueued);
  if (t.queued >= tenantCap) {
    const rate = tenantAdmissionRate(s, t, now, () => call.backloggedWeight());
    const wait = secondsToDrain(t.queued - tenantCap + call.shedOf(t), rate);
    return shed('queue_full', `Tenant ${t.id} has ${t.queued} units queued, retries included.`, wait);
  }
  const fleetCap = withRetryHeadroom(s.settings.globalMaxQueued);
  if (s.queued.size >= fleetCap) {
    const wait = secondsToDrain(s.queued.size - fleetCap + ++call.globalShed, fleetAdmissionRate(s, now));
    return shed('queue_full', `The fleet's queue is full (${s.queued.size} units, retries included).`, wait);
  }
  return null;
}

/**
 * Whether `n` new units of `cost` each fit the door now (n = 1 for a submission, the item count for a
 * batch, which is admitted whole or not at all). The k-th refusal of a call waits k admissions more.
 */
function doorCheck(
  s: CoreState,
  t: TenantState,
  cost: number,
  now: number,
  call: DoorCall,
  n = 1,
  readOnly = false,
  lane?: Lane,
  /** The governor of the units' pool; null: a pool not governed yet. */
  g: GovernorState | null = s.governor,
): Shed | null {
  const what = n === 1 ? 'this unit' : `these ${n} units`;
  if (s.draining && s.intake === 'refuse') {
    return shed(
      'draining',
      'The fleet is draining for maintenance; retry after it resumes.',
      call.drainingRetryAfter(),
    );
  }
  if (t.queued + n > t.settings.maxQueued) {
    const k = call.shedOf(t);
    const rate = tenantAdmissionRate(s, t, now, () => call.backloggedWeight());
    const wait = secondsToDrain(t.queued + n - t.settings.maxQueued + k - 1, rate);
    const room = Math.max(0, t.settings.maxQueued - t.queued);
    return shed(
      'queue_full',
      n === 1
        ? `Tenant ${t.id} has ${t.queued} units queued, its limit is ${t.settings.maxQueued}.`
        : `Tenant ${t.id}'s queue has room for ${room} units (${t.queued} queued, limit ${t.settings.maxQueued}); ${n} asked.`,
      wait,
    );
  }
  if (s.queued.size + n > s.settings.globalMaxQueued) {
    const k = ++call.globalShed;
    const wait = secondsToDrain(
      s.queued.size + n - s.settings.globalMaxQueued + k - 1,
      fleetAdmissionRate(s, now),
    );
    return shed('queue_full', `The fleet's queue is full for ${what} (${s.queued.size} units queued).`, wait);
  }
  const tooLong = lane === undefined ? null : waitCheck(s, t, lane, n, now, call, g);
  if (tooLong) return tooLong;
  // A read-only check (a query) sees a due rollover without making it.
  if (!readOnly && touchLedger(s, t, now)) refreshTenant(s, t);
  const left = readOnly ? remainingAt(t.ledger, now) : remaining(t.ledger);
  if (left < t.queuedCost + cost * n) {
    const msg = `Tenant ${t.id}'s token budget cannot cover ${what}: ${Math.max(0, left)} tokens left, ${t.queuedCost} already queued, ${cost * n} asked.`;
    return shed('budget_exhausted', msg, budgetRetryAfter(t.ledger, now));
  }
  return null;
}

/**
 * A lane's bound on the expected wait (`maxWaitSeconds`): the tenant's units ahead in that lane and
 * the lanes above it, and the new ones, at the tenant's admission rate bounded by what the governor
 * allows now, plus the rest of a pause. Over the bound, the unit is shed with the wait as the reason
 * and Retry-After the time until the wait is back within the bound.
 */
function waitCheck(
  s: CoreState,
  t: TenantState,
  lane: Lane,
  n: number,
  now: number,
  call: DoorCall,
  g: GovernorState | null,
): Shed | null {
  const bound = s.settings.maxWaitSeconds?.[PRIORITIES[lane]!];
  if (bound === undefined) return null;
  let ahead = n;
  for (let l = 0; l <= lane; l++) ahead += t.flows[l as Lane].live;
  const rate = governedTenantRate(s, t, now, () => call.backloggedWeight(), g);
  const paused = g === null ? 0 : Math.max(0, g.pausedUntil - now) / 1000;
  const wait = (rate > 0 ? ahead / rate : Infinity) + paused;
  if (wait <= bound) return null;
  const shown = Number.isFinite(wait) ? `about ${Math.ceil(wait)} s` : 'unbounded (nothing is admitted now)';
  return shed(
    'wait_too_long',
    `Tenant ${t.id}'s ${PRIORITIES[lane]} work would wait ${shown}; this lane's bound is ${bound} s.`,
    clampSeconds(wait - bound),
  );
}

/**
 * The door for a whole batch of `items` units of `costPerItem` tokens each: null when all of them
 * would be queued now, else the one refusal for the batch (its code, message and Retry-After are the
 * door's). Changes nothing (safe in a query). Each item is still offered through `submit` and may be refused there
 * (the check reserves no room): a batch accepted here waits for room, it is never dropped.
 */
export function checkBatch(
  s: CoreState,
  tenant: string,
  items: number,
  costPerItem: number,
  now: number,
): Refusal | null {
  const t = s.tenants.get(tenant);
  if (!t) return unknownTenant(tenant);
  const n = Math.max(0, Math.floor(Number.isFinite(items) ? items : 0));
  if (n === 0) return null;
  const shed = doorCheck(s, t, Math.max(1, tokenCount(costPerItem)), now, new DoorCall(s, now), n, true);
  if (!shed) return null;
  const { code, message, retryAfterSeconds } = shed;
  return { code, message, retryAfterSeconds };
}

function unknownTenant(tenant: string): Refusal {
  return {
    code: 'unknown_tenant',
    message: `Tenant ${tenant} does not exist.`,
    retryAfterSeconds: UNKNOWN_TENANT_RETRY_SECONDS,
  };
}

function shed(code: ShedCode, message: string, retryAfterSeconds: number): Shed {
  return { accepted: false, code, message, retryAfterSeconds };
}

function laneOf(p: UnitSubmission['priority']): Lane {
  const i = PRIORITIES.indexOf(p);
  return (i < 0 ? 1 : i) as Lane;
}

/** Appends a unit to its fairness key's FIFO in its tenant's flow of its lane. */
export function enqueue(
  s: CoreState,
  t: TenantState,
  lane: Lane,
  runId: string,
  cost: number,
  attempt: number,
  pool: string,
  key: string,
): void {
  const u: QueuedUnit = { runId, tenant: t, lane, cost, attempt, live: true, pool, key, slot: key };
  s.queued.set(runId, u);
  s.queuedCost += cost;
  t.queued++;
  t.queuedCost += cost;
  s.lanes[lane].units++;
  // A new head (the first unit, or a key owed service ahead of the head) may park or unpark the flow.
  if (pushUnit(t.flows[lane], u)) refreshTenant(s, t);
}

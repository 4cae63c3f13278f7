/**
 * Types of the policy core. Pure data: everything here is JSON-serialisable so
 * that it crosses the workflow sandbox, queries and continue-as-new unchanged.
 */

import type { BreakerStatus } from './breaker';

export const PRIORITIES = ['interactive', 'standard', 'batch'] as const;
export type Priority = (typeof PRIORITIES)[number];

export type BudgetPeriod = 'hour' | 'day' | 'month' | 'none';

export interface TenantSettings {
  /** Share of the fleet's tokens relative to other tenants, > 0. */
  weight: number;
  /** Queued units (not yet admitted) this tenant may hold; beyond it the door sheds with queue_full. */
  maxQueued: number;
  /** Admitted, unreleased units this tenant may hold at once. */
  maxInFlight: number;
  /** Token budget per period; tokens null means unlimited. */
  budget: { tokens: number | null; period: BudgetPeriod };
  /**
   * What a run does when a step needs more than the budget has left: `fail` (budget_exhausted, the
   * default) or `park` until the period rolls or the budget is raised. Read by the API when it accepts
   * a run (the run carries it); the core ignores it.
   */
  onBudgetExhausted?: 'fail' | 'park';
  /**
   * Weights of the tenant's fairness keys against each other (> 0; a key not named weighs 1), at
   * most MAX_KEY_WEIGHTS entries. They divide the tenant's share, never add to it.
   */
  keyWeights?: Record<string, number>;
}

/** One unit offered to the scheduler. The payload stays in the run workflow; this is all the core keeps. */
export interface UnitSubmission {
  runId: string;
  tenant: string;
  priority: Priority;
  /** Estimated model tokens: the unit's cost in fair queuing, its reservation in the ledger. */
  cost: number;
  /**
   * 0 for the first submission. A run whose lease expired re-queues with attempt+1;
   * a submission with an attempt the core already saw is a duplicate and changes nothing.
   */
  attempt?: number;
  /** A failed run started again on purpose (batch resume): the core forgets that it finished. */
  redrive?: boolean;
  /**
   * Tokens the run used in its earlier attempts (a retry's, attempt > 0). A recovering chain that
   * knows nothing of the run counts them: they were paid into the ledger it lost.
   */
  usedTokens?: number;
  /**
   * The model pool its calls go to (`pools.ts`): its governor admits it. Absent: the default pool.
   */
  pool?: string;
  /**
   * Its run is not started yet (decide, then start): admit it in the answer if the fair order admits
   * it now; otherwise it is not kept (`withdrawn`), and its offer starts the run and submits it again.
   */
  admitNow?: boolean;
  /**
   * Its fairness key inside the tenant (an end user, say): the tenant's turns are shared between its
   * keys by tokens (`key-queue.ts`). Absent: the tenant's default key ''.
   */
  fairnessKey?: string;
}

/** `invalid_unit`: a unit not in the API's forms (the submit update refuses it alone, not its neighbours). */
export type ShedCode =
  'queue_full' | 'wait_too_long' | 'budget_exhausted' | 'draining' | 'unknown_tenant' | 'invalid_unit';

/** Why the door refused work, in the one shape every layer passes on (429/503 + Retry-After at the API). */
export interface Refusal {
  code: ShedCode;
  message: string;
  retryAfterSeconds: number;
}

/** A refused answer, wherever an answer is accepted or not (a unit, a batch). */
export type Refused = { accepted: false } & Refusal;

export type SubmitResult =
  | {
      runId: string;
      accepted: true;
      duplicate: boolean;
      held: boolean;
      /** An `admitNow` unit admitted in this answer: its run starts with this admission. */
      admission?: Admission;
      /** An `admitNow` unit the fair order did not admit now: not kept; start its run, then submit it again. */
      withdrawn?: boolean;
    }
  | ({ runId: string } & Refused);

/** The door's answer for a whole batch (admitted whole or not at all). */
export type BatchVerdict = { accepted: true } | Refused;

export interface Admission {
  runId: string;
  tenant: string;
  priority: Priority;
  attempt: number;
  /** Fleet-wide admission counter, 1, 2, 3, … for the scheduler's whole life. */
  seq: number;
  admittedAt: number;
  leaseExpiresAt: number;
  /** Tokens reserved in the ledger for this unit. */
  reserved: number;
}

/** `gated`: the run gives its slot back to wait for a human; it is not finished and queues again later. */
export type ReleaseOutcome = 'completed' | 'failed' | 'cancelled' | 'gated';

export interface Release {
  runId: string;
  attempt: number;
  /** Tokens actually used by the unit (settled in the ledger unless `perCall`). */
  usedTokens: number;
  outcome: ReleaseOutcome;
  /** The unit's calls were charged one by one ({@link Charge}): the release settles no tokens. */
  perCall?: boolean;
  /**
   * The run's tenant: lets a release the scheduler holds no lease for (a scheduler chain that was
   * lost, reset or restarted) still charge the tenant's ledger, once.
   */
  tenant?: string;
}

export interface Renewal {
  runId: string;
  attempt: number;
  /** Tokens used so far (lets lease expiry charge what was used, unless `perCall`). */
  usedTokens: number;
  perCall?: boolean;
  /**
   * Who the run is, so a scheduler that holds no lease for it (a lost or reset chain) takes the
   * running run back under a lease instead of leaving it unmetered.
   */
  tenant?: string;
  priority?: Priority;
  cost?: number;
  /** The model pool the run was admitted in (`pools.ts`), so an adopted lease counts there. Absent: the default pool. */
  pool?: string;
}

/**
 * What the provider billed for calls of one run's attempt (summed over a worker's flush, or one call
 * when `key` names it): charged to the tenant whether or not the lease still holds, so the ledger
 * follows the provider's bill.
 */
export interface Charge {
  tenant: string;
  runId: string;
  attempt: number;
  /** Tokens charged; for a `correction`, the signed difference (negative: a refund). */
  tokens: number;
  /** The call's durable key: the ledger books one charge and one correction per key, however often they come. */
  key?: string;
  /**
   * A provisional charge (a call of unknown outcome, charged its worst case) settled against the
   * provider's report: `tokens` is billed − provisional. A refund lowers `spent` only.
   */
  correction?: boolean;
  /**
   * The call charges owner that sent it (`ownerId`): not booked once a sweep fenced that owner, as
   * the sweep took its calls over and charges them itself.
   */
  owner?: string;
}

/** The answer to a run asking for more tokens than its reservation. */
export type TopUpResult =
  | { granted: true; reserved: number }
  | { granted: false; code: 'budget_exhausted' | 'no_lease'; remaining: number; retryAfterSeconds: number };

/** What the model plane looked like to the workers since their last report (aggregated, not per call). */
export interface ModelObservation {
  /** Window end, ms since epoch (the reporter's clock). */
  at: number;
  calls: number;
  throttled: number;
  /** Largest Retry-After of a rate-limit 429 in the window, ms (already capped by the reporter). */
  maxRetryAfterMs: number;
  /**
   * When the window's Retry-Afters end, measured from each call's own time (the reporter's clock,
   * ms since epoch). Absent from older workers; the governor then measures `maxRetryAfterMs` from now.
   */
  retryUntil?: number;
  /** Lowest `x-ratelimit-remaining-tokens` seen, with its limit and reset, when the provider sent them. */
  remainingTokens?: number;
  limitTokens?: number;
  resetTokensMs?: number;
  /** Lowest `x-ratelimit-remaining-requests` seen, with its limit and reset, when the provider sent them. */
  remainingRequests?: number;
  limitRequests?: number;
  resetRequestsMs?: number;
  tokens: number;
  /**
   * Of `calls`, those refused for the key (401, 403, a key-level quota: a spend cap is one, and is not
   * in `throttled`) and those answered 5xx. Absent from older workers and when none.
   */
  keyRefused?: number;
  serverErrors?: number;
  /**
   * Served calls whose latency was measured, their summed latency (ms, sent to answered) and their
   * served tokens. Absent from older workers and when none.
   */
  latencyCalls?: number;
  latencyMs?: number;
  latencyTokens?: number;
  /** The model pool of the calls observed (`pools.ts`). Absent: the default pool. */
  pool?: string;
}

export const WAIT_CODES = [
  'tenant_in_flight_cap',
  'governor',
  'priority',
  'fair_share',
  'draining',
  'budget',
  'provider',
] as const;
export type WaitCode = (typeof WAIT_CODES)[number];

export interface WaitingOn {
  code: WaitCode;
  message: string;
  /** 1-based position in its lane's queue (all tenants), where known. */
  position?: number;
  lane: Priority;
  /** The unit's fairness key inside its tenant; absent for the tenant's default key. */
  fairnessKey?: string;
  /** Where it stands among its tenant's keys in its lane (present when the tenant queues keyed units). */
  keyPosition?: KeyPosition;
}

/** A queued unit's place among its tenant's fairness keys in its lane, predicted as the tags stand. */
export interface KeyPosition {
  /** Other keys of the tenant whose next unit is served before this one. */
  keysAhead: number;
  /** Keys of the tenant with units queued in this lane, its own included. */
  keysQueued: number;
  /** Units of its own key queued before it. */
  unitsAheadInKey: number;
  /** Units of its tenant (in this lane, every key) served before it. */
  unitsAheadInTenant: number;
  /** The hashed bucket its key shares (`#0`–`#15`) when the tenant's flow holds more keys than its bound. */
  bucket?: string;
}

export interface GovernorParams {
  minConcurrency: number;
  maxConcurrency: number;
  /** Multiplicative decrease factor on throttling, e.g. 0.7. */
  decrease: number;
  /** Additive increase of the concurrency limit per second of healthy reports. */
  increaseConcurrency: number;
  /** Admitted tokens-per-minute: start, floor and ceiling. */
  initialTokensPerMinute: number;
  minTokensPerMinute: number;
  maxTokensPerMinute: number;
  /** Additive increase of tokens-per-minute per second of healthy reports (when the provider advertises no limit). */
  increaseTokensPerMinute: number;
  /** The same increase as a share of the provider's advertised limit, e.g. 0.05; the larger of the two applies. */
  increaseQuotaShare: number;
  /** Admit at most this share of the provider's advertised tokens-per-minute limit, e.g. 0.95. */
  quotaShare: number;
  /** Named model pools' own quota shares (`MODELS.*.quotaShare`); a pool not here uses `quotaShare`. */
  poolQuotaShares?: Record<string, number>;
  /** The longest the fleet pauses for one report's Retry-After, ms, however long the provider asks. */
  maxPauseMs: number;
  /**
   * After a throttle's cut, further throttles within this window do not cut again; a gentle slowdown
   * (remaining tokens low) waits as long after any decrease, and does not hold back a throttle's cut.
   */
  decreaseCooldownMs: number;
  /**
   * Slow down before the wall: when remaining/limit drops below this while tokens are spent at the
   * target share of the quota, stop increasing; when spent faster than the quota itself, cut gently.
   */
  remainingLowWater: number;
  /**
   * The lowest spend factor admission trusts: units that spend less than their estimates (worst
   * cases) are paced on what they spend, down to this share of it, e.g. 0.1. Budgets still reserve
   * the estimates. Absent in chains begun before it existed: 1 (never below the estimate).
   */
  minSpendFactor?: number;
  /**
   * While the provider states no limit, admission is held to this multiple of the tokens served
   * lately (it probes up from what passes). Absent in chains begun before it existed, or 1 or less:
   * no probe ceiling (the limits start at `initialTokensPerMinute` and only 429s bring them down).
   */
  probeFactor?: number;
  /** A 429 without stated limits leaves a soft ceiling at this share of what was served just before; default `decrease`. */
  probeDecrease?: number;
  /** The soft ceiling grows by this share of what is served (or of itself, if more) per second without a 429; default 0. */
  probeIncreaseShare?: number;
  /** The key breaker's first backoff before a probe and its cap, ms; absent in older chains: BREAKER_DEFAULTS. */
  breakerProbeMinMs?: number;
  breakerProbeMaxMs?: number;
  /**
   * Served calls slower than this multiple of their baseline (per call and per token) for
   * `latencySustainMs` mean a provider queueing calls: the admitted rate is cut by `latencyDecrease`
   * once per cooldown, and grows again only once latency is back under the multiple. Absent in
   * chains begun before it existed, or 1 or less: latency is not watched.
   */
  latencyFactor?: number;
  latencySustainMs?: number;
  latencyDecrease?: number;
}

export interface FleetSettings {
  concurrency: number;
  floors: { standard: number; batch: number };
  leaseTtlSeconds: number;
  globalMaxQueued: number;
  /**
   * Share of the slots in force (rounded up, never all) that standard and batch work may not take,
   * so an interactive run is admitted at once. Absent in schedulers begun before it existed (none).
   */
  interactiveReserve?: number;
  /**
   * The longest a new unit may expect to wait in its lane, in seconds: one whose expected wait (its
   * tenant's units ahead of it at the tenant's admission rate, bounded by the governor's rate now,
   * plus a pause) is longer is shed with `wait_too_long`. A lane without one has no bound.
   */
  maxWaitSeconds?: Partial<Record<Priority, number>>;
}

export interface GovernorStatus {
  concurrencyLimit: number;
  tokensPerMinute: number;
  throttledRecently: boolean;
  pausedUntil: string | null;
  lastThrottleAt: string | null;
  decreases: number;
  increases: number;
  /** The provider's advertised tokens-per-minute limit, once a call reported it. */
  providerTokensPerMinute?: number;
  /** Tokens per minute the provider served lately, once any call was reported. */
  servedTokensPerMinute?: number;
  /** The provider's advertised requests-per-minute limit, once a call reported it. */
  providerRequestsPerMinute?: number;
  /**
   * What the request limit allows in tokens per minute at the tokens a call has lately served (its
   * share of the limit): the token ceiling when it is the lower, once calls were served.
   */
  requestBoundTokensPerMinute?: number;
  /**
   * The key breaker: `open` while the provider refuses the key (or fails every call), admission
   * paused. Absent from a scheduler older than it.
   */
  breaker?: BreakerStatus;
  /**
   * Latency of served calls: baseline and recent ms per call, and since when it has been above the
   * congestion multiple of the baseline (null while it is not). Absent until a baseline is set.
   */
  congestion?: CongestionStatus;
}

export interface CongestionStatus {
  baselineMs: number;
  recentMs: number;
  since: string | null;
  /** Elevated for the sustain time or longer: admission is being slowed for it. */
  congested: boolean;
}

export interface LedgerView {
  budget: number | null;
  period: BudgetPeriod;
  reserved: number;
  spent: number;
  remaining: number | null;
  periodStart: string;
}

export interface LedgerEntry {
  at: string;
  tenant: string;
  runId: string;
  kind: 'reserve' | 'settle' | 'release' | 'expire' | 'rollover' | 'charge' | 'topup';
  tokens: number;
}

/** The object of `GET /v1/admin/scheduler` and of the scheduler's `status` query. */
export interface SchedulerStatus {
  mode: 'open' | 'draining' | 'drained';
  intake: 'open' | 'refuse' | 'hold';
  inFlight: number;
  queued: { total: number; byPriority: Record<Priority, number>; byTenant: Record<string, number> };
  counters: {
    submitted: number;
    admitted: number;
    completed: number;
    failed: number;
    cancelled: number;
    shed: number;
    expired: number;
    /** Admissions by lane (sums to `admitted` for a chain started with this field). */
    admittedByPriority: Record<Priority, number>;
    /** Model calls, and those the provider throttled, as the workers reported them. */
    modelCalls: number;
    throttled: number;
    /** Leases given back to wait for a human gate (the run is not finished). */
    gated: number;
    /** Running runs the scheduler took back under a lease after it lost them (recovery). */
    adopted: number;
  };
  /** The fleet settings in force, and the slots the interactive reserve keeps free at the cap in force. */
  config: FleetSettings & { reservedSlots: number };
  /** The default model pool's governor. */
  governor: GovernorStatus;
  /** Named model pools' governors, with their leases (`pools.ts`); absent when none is in use. */
  pools?: Record<string, GovernorStatus & { inFlight: number }>;
  history: { length: number; continuedAsNew: number };
}

export interface TenantStatus {
  tenant: string;
  settings: TenantSettings;
  queuedByPriority: Record<Priority, number>;
  /**
   * By lane: the fairness-key slots with queued units (the default key '' and each bucket count as
   * one) and how many of those are hash buckets (`#n`, shared by keys past the flow's bound).
   */
  keysQueuedByPriority: Record<Priority, KeysQueued>;
  inFlight: number;
  ledger: LedgerView;
}

/** A flow's fairness keys with queued units (`TenantStatus.keysQueuedByPriority`). */
export interface KeysQueued {
  keys: number;
  buckets: number;
}

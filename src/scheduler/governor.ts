import { BREAKER_DEFAULTS, breakerStatus, newBreaker, observeBreaker } from './breaker';
import type { BreakerParams, BreakerState } from './breaker';
import { congested, latencyElevated, newLatency, observeLatency, recentLatency } from './governor-latency';
import type { LatencyState } from './governor-latency';
import { probeCeiling, probing, softCreep, softCut } from './governor-probe';
import { foldObservations } from './governor-window';
import type { ObservedWindow } from './governor-window';
import { RATE_WINDOW_MS, newRate, ratePerSecond, recentEvents, recordEvents } from './rate';
import type { RateState } from './rate';
import type { GovernorParams, GovernorStatus, ModelObservation } from './types';

/**
 * The token governor: an AIMD controller of the fleet's concurrency limit and
 * admitted tokens-per-minute, a token bucket that meters admitted estimated cost,
 * and a pause honouring the provider's Retry-After. It tracks the provider's
 * actual quota: never above a share of the advertised `x-ratelimit-limit-tokens`, nor of what the
 * advertised `x-ratelimit-limit-requests` carries at the tokens a call serves (the binding one
 * decides), and a cut starts from that limit or its own target, not from a rate measured on a quiet fleet.
 * While the provider states no limit, it probes instead (`governor-probe.ts`): admission is held to a
 * multiple of what was served lately, and a 429 leaves a soft ceiling below what was served then.
 */
export interface GovernorState {
  concurrencyLimit: number;
  tokensPerMinute: number;
  /** Bucket level; negative after a unit larger than the bucket was let through. */
  tokens: number;
  tokensAt: number;
  /** No admissions before this instant (ms); 0 when never paused. */
  pausedUntil: number;
  lastThrottleAt: number | null;
  lastDecreaseAt: number | null;
  /**
   * The last cut a throttle made (concurrency and tokens); a throttle cuts again once per cooldown
   * after it. Undefined in a state from before it existed (then `lastDecreaseAt` stands for it).
   */
  lastCutAt?: number | null;
  decreases: number;
  increases: number;
  /** The provider's advertised tokens-per-minute limit, as last reported; null until one is. */
  providerTokensPerMinute: number | null;
  /** Tokens the provider served (decayed over RATE_WINDOW_MS). */
  served: RateState;
  /** The provider's advertised requests-per-minute limit, as last reported; null until one is (absent in older states). */
  providerRequestsPerMinute?: number | null;
  /** Calls the provider served (decayed over RATE_WINDOW_MS): tokens per call is `served` over it. */
  servedCalls?: RateState;
  /** Calls answered over RECENT_MS, throttled ones too: the requests being spent now. */
  recentCalls?: RateState;
  /** The same over RECENT_MS: what is being spent now, for the remaining-tokens check. */
  recent: RateState;
  /** Estimated tokens admitted (decayed over RATE_WINDOW_MS), to compare with what was served. */
  admitted: RateState;
  /**
   * Units that ended, their reservations and what they spent (decayed over RATE_WINDOW_MS): the spend
   * factor compares the two for the same units, so it does not drift while runs are under way.
   */
  settledReserved?: RateState;
  settledSpent?: RateState;
  /**
   * The soft ceiling (estimated tokens per minute) the last 429 without stated limits left, grown
   * since; null before any, and absent in states from before it existed (then null).
   */
  softTokensPerMinute?: number | null;
  /** The key breaker; absent until a call failed for the key or the server (then closed, as absent is). */
  breaker?: BreakerState;
  /** The latency of served calls (`governor-latency.ts`); absent until a report timed one. */
  latency?: LatencyState;
  /** First and latest report with calls in it; null before any. */
  firstReportAt: number | null;
  lastReportAt: number | null;
}

/** "throttledRecently" in the status means a throttle within this window. */
export const THROTTLE_RECENT_MS = 60_000;
/** Window of the recent served rate: a few seconds, so a quota cut shows in it at once. */
const RECENT_MS = 5000;
/**
 * A healthy report grows the limits by the quiet time since the report before it (or since the
 * cooldown after the last throttle), up to this much: recovery follows time, not only the number
 * of reports, so a fleet making a call every few seconds recovers as fast as a busy one.
 */
const MAX_GROWTH_CREDIT_MS = 10_000;
const EPS = 1e-6;

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

export function newGovernor(p: GovernorParams, now: number): GovernorState {
  const tpm = clamp(p.initialTokensPerMinute, p.minTokensPerMinute, p.maxTokensPerMinute);
  return {
    concurrencyLimit: p.maxConcurrency,
    tokensPerMinute: tpm,
    tokens: (tpm * BURST_MS) / 60_000,
    tokensAt: now,
    pausedUntil: 0,
    lastThrottleAt: null,
    lastDecreaseAt: null,
    lastCutAt: null,
    decreases: 0,
    increases: 0,
    providerTokensPerMinute: null,
    served: newRate(now),
    providerRequestsPerMinute: null,
    servedCalls: newRate(now),
    recentCalls: newRate(now),
    recent: newRate(now),
    admitted: newRate(now),
    settledReserved: newRate(now),
    settledSpent: newRate(now),
    softTokensPerMinute: null,
    firstReportAt: null,
    lastReportAt: null,
  };
}

/** The admission bucket holds this much time's worth of tokens. */
export const BURST_MS = 5000;

/*
 * The bucket holds a few seconds of tokens, not a minute: a minute's burst on a cold start is a
 * minute of calls in one go, which the provider answers with a wall of 429s. A unit larger than the
 * bucket still passes when the bucket is full (see `need`), so large units are paced, not starved.
 */
function capacity(g: GovernorState): number {
  return (g.tokensPerMinute * BURST_MS) / 60_000;
}

/** Tokens that may be in flight (reserved, not yet served): what the provider serves within a lease. */
export function inFlightTokenCap(g: GovernorState, leaseTtlSeconds: number): number {
  return (g.tokensPerMinute * Math.max(1, leaseTtlSeconds)) / 60;
}

/** Bucket level at `now` (pure). */
export function tokensAt(g: GovernorState, now: number): number {
  const dt = Math.max(0, now - g.tokensAt);
  return Math.min(capacity(g), g.tokens + (dt * g.tokensPerMinute) / 60_000);
}

export function refill(g: GovernorState, now: number): void {
  if (now <= g.tokensAt) return;
  g.tokens = tokensAt(g, now);
  g.tokensAt = now;
}

/** A unit larger than the whole bucket passes when the bucket is full, so it cannot deadlock. */
function need(g: GovernorState, cost: number): number {
  return Math.min(cost, capacity(g));
}

export function canTake(g: GovernorState, cost: number): boolean {
  return g.tokens >= need(g, cost) - EPS;
}

/**
 * A top-up reserved `tokens` more for a unit in flight: the bucket meters them as it metered the
 * unit's estimate (possibly into debt, which slows the next admissions), so pacing follows what
 * units reserve in all, the measure the spend factor compares their spending with. (Not in a chain
 * begun without `minSpendFactor`, whose bucket meters estimates only, as it always did.)
 */
export function meterTopUp(
  g: GovernorState,
  p: Pick<GovernorParams, 'minSpendFactor'>,
  now: number,
  tokens: number,
): void {
  if (p.minSpendFactor === undefined || !(tokens > 0)) return;
  refill(g, now);
  take(g, tokens);
}

/** Takes a unit's estimate from the bucket (after `refill`, so `tokensAt` is now). */
export function take(g: GovernorState, cost: number): void {
  g.tokens -= cost;
  recordEvents(g.admitted, g.tokensAt, cost);
}

/**
 * A unit ended having spent `unused` tokens fewer than it took from the bucket: a debt in the
 * bucket (left by a unit larger than it) is settled to what was really spent, up to an empty
 * bucket. A bucket not in debt is left as it is: estimates are what it meters.
 */
export function refundDebt(g: GovernorState, now: number, unused: number): void {
  refill(g, now);
  if (g.tokens < 0 && unused > 0) g.tokens = Math.min(0, g.tokens + unused);
}

/** Earliest instant ≥ now at which the bucket covers `cost` (pure). */
export function bucketReadyAt(g: GovernorState, cost: number, now: number): number {
  const short = need(g, cost) - EPS - tokensAt(g, now);
  return short <= 0 ? now : now + Math.ceil((short * 60_000) / g.tokensPerMinute);
}

export function isPaused(g: GovernorState, now: number): boolean {
  return now < g.pausedUntil;
}

/** Runs are trusted to spend at most this many times their estimate when sizing admissions. */
const MAX_SPEND_FACTOR = 10;
/** Completed units' reservations the factor needs before it goes below 1 (a few units say little). */
const MIN_RESERVED_TO_TRUST_LESS = 2_000;

/**
 * What completed units spent per token they reserved (1 until measured), between `minSpendFactor`
 * (1 when absent) and MAX_SPEND_FACTOR. Below 1, admission paces on what units spend rather than on
 * their worst cases, which would leave the quota idle; the budget ledger still reserves the worst case.
 */
export function spendFactor(
  g: GovernorState,
  now: number,
  p: Pick<GovernorParams, 'minSpendFactor'>,
): number {
  /*
   * Measured on units that ended: what they spent over what they had reserved. Comparing the served
   * rate with the admitted rate instead drifts whenever runs take long (served lags admitted, then
   * outlasts it), and the drift feeds back: a higher factor admits less, which raises it again.
   */
  if (!g.settledReserved || !g.settledSpent) return 1;
  const reserved = recentEvents(g.settledReserved, now);
  const spent = recentEvents(g.settledSpent, now);
  if (!(reserved > 0)) return 1;
  const floor = reserved >= MIN_RESERVED_TO_TRUST_LESS ? Math.min(1, p.minSpendFactor ?? 1) : 1;
  return clamp(spent / reserved, floor, MAX_SPEND_FACTOR);
}

/**
 * A unit ended (`completed`: it ran to its end): it had reserved `reserved` and spent `spent`. The
 * spend factor learns from units that ran to their end; a failed or cancelled one stopped short,
 * and trusting it would over-admit. (A chain begun without `minSpendFactor`, whose factor never goes
 * below 1, learns from every unit, as it always did.)
 */
export function recordSettled(
  g: GovernorState,
  p: Pick<GovernorParams, 'minSpendFactor'>,
  now: number,
  completed: boolean,
  reserved: number,
  spent: number,
): void {
  if (!completed && p.minSpendFactor !== undefined) return;
  g.settledReserved ??= newRate(now);
  g.settledSpent ??= newRate(now);
  recordEvents(g.settledReserved, now, Math.max(0, reserved));
  recordEvents(g.settledSpent, now, Math.max(0, spent));
}

/** Served calls the tokens-per-call measure needs before the request limit is read in tokens. */
const MIN_CALLS_FOR_RATIO = 5;

/**
 * The advertised request limit in served tokens per minute: requests a minute times the tokens a
 * served call has lately carried; null without a limit or before enough calls were served (pure).
 */
export function requestBoundPerMinute(g: GovernorState, now: number): number | null {
  const rpm = g.providerRequestsPerMinute;
  if (rpm === null || rpm === undefined || !g.servedCalls) return null;
  const calls = recentEvents(g.servedCalls, now);
  if (calls < MIN_CALLS_FOR_RATIO) return null;
  return (rpm * recentEvents(g.served, now)) / calls;
}

/**
 * The most the governor admits, in estimated tokens per minute: its ceiling, lowered to a share
 * of the provider's binding limit (tokens, or requests at the tokens a call serves), divided by
 * what units really spend per estimated token.
 */
export function tokenCeiling(g: GovernorState, p: GovernorParams, now: number): number {
  if (isProbing(g, p)) {
    const probe = probeCeiling(p, { served: probeServed(g, p, now), soft: g.softTokensPerMinute ?? null });
    return clamp(probe, p.minTokensPerMinute, p.maxTokensPerMinute);
  }
  const limit = Math.min(g.providerTokensPerMinute ?? Infinity, requestBoundPerMinute(g, now) ?? Infinity);
  const quota = Number.isFinite(limit) ? (limit * p.quotaShare) / spendFactor(g, now, p) : Infinity;
  return clamp(Math.min(p.maxTokensPerMinute, quota), p.minTokensPerMinute, p.maxTokensPerMinute);
}

/**
 * Whether the governor probes: its chain does, and the model plane has reported calls without
 * stating a limit (before any report, `initialTokensPerMinute` holds as it always did) (pure).
 */
export function isProbing(g: GovernorState, p: GovernorParams): boolean {
  return g.firstReportAt !== null && probing(p, g.providerTokensPerMinute, g.providerRequestsPerMinute);
}

/*
 * Divided by the whole rate window even while the history is young, so admission grows by
 * `probeFactor` - 1 of what is served per window (a few-fold a minute), never faster than what it
 * admits is served.
 */
function probeServed(g: GovernorState, p: GovernorParams, now: number): number {
  return (ratePerSecond(g.served, now) * 60) / spendFactor(g, now, p);
}

/** Tokens per minute the provider served lately; null until a full rate window has been observed (pure). */
export function servedPerMinute(g: GovernorState, now: number): number | null {
  if (g.firstReportAt === null || now - g.firstReportAt < RATE_WINDOW_MS) return null;
  return ratePerSecond(g.served, now) * 60;
}

/*
 * The decay of rate.ts (tau/(tau+dt), the same numbers on every engine) over RECENT_MS. A
 * count kept this way estimates the events of the last RECENT_MS.
 */
function recordRecent(r: RateState, now: number, n: number): void {
  if (now > r.at) {
    r.count *= RECENT_MS / (RECENT_MS + now - r.at);
    r.at = now;
  }
  r.count += n;
}

/** Events per minute of a RECENT_MS count (pure). */
function recentRate(r: RateState, now: number): number {
  const dt = Math.max(0, now - r.at);
  return ((r.count * RECENT_MS) / (RECENT_MS + dt)) * (60_000 / RECENT_MS);
}

/** Tokens per minute served over the last few seconds (pure). */
export function recentPerMinute(g: GovernorState, now: number): number {
  return recentRate(g.recent, now);
}

/** Sets the admitted rate (the bucket is refilled at the old rate first and never holds more than its capacity). */
function setRate(g: GovernorState, tpm: number, now: number): void {
  refill(g, now);
  g.tokensPerMinute = tpm;
  g.tokens = Math.min(g.tokens, capacity(g));
}

/*
 * A cut starts from the governor's own targets, never from a rate measured on a quiet fleet (one
 * stray 429 there would drop it to its floors). Tokens: the target rate, which the provider's
 * advertised limit already caps (`tokenCeiling`). Concurrency: from the units in flight when they
 * use the limit (at least `factor` of it: a limit far above them would be cut without effect),
 * else from the limit itself, so a 429 with one unit in flight does not cut it to one.
 */
/**
 * The token rate a cut starts from: the target (capped by the advertised limit), or what the
 * provider served when that is clearly less than what was admitted (it served what it could take,
 * in estimated tokens). A served rate at the level of what was admitted only measures demand: on a
 * quiet fleet it is near zero and says nothing of the provider's capacity.
 */
function cutBase(g: GovernorState, p: GovernorParams, factor: number, now: number): number {
  const target = Math.min(g.tokensPerMinute, tokenCeiling(g, p, now));
  const served = servedPerMinute(g, now);
  if (served === null) return target;
  const servedEstimated = served / spendFactor(g, now, p);
  const admitted = ratePerSecond(g.admitted, now) * 60;
  return servedEstimated < admitted * factor ? Math.min(target, servedEstimated) : target;
}

function decreaseBy(
  g: GovernorState,
  p: GovernorParams,
  factor: number,
  now: number,
  inFlight: number,
): void {
  const limit = g.concurrencyLimit;
  const flowing = inFlight >= limit * factor ? Math.min(limit, Math.max(inFlight, p.minConcurrency)) : limit;
  g.concurrencyLimit = Math.max(p.minConcurrency, Math.floor(flowing * factor));
  if (isProbing(g, p)) cutSoft(g, p, now);
  else decreaseTokens(g, p, factor, now);
  g.lastCutAt = now;
}

/*
 * Without stated limits a 429 is the only word of the limit: what was served over the last few
 * seconds is what the provider could take, so the soft ceiling goes just below it, not to a share
 * of a target the provider never stated nor of the units in flight. Throttles that go on past a
 * cut's cooldown are calls retrying a backlog the provider serves no faster than its limit: the
 * rate then goes below the ceiling by `decrease` per cut, so the backlog drains, and a quiet
 * cooldown brings it back to the ceiling (`increaseProbing`).
 */
function cutSoft(g: GovernorState, p: GovernorParams, now: number): void {
  const lastCut = g.lastCutAt !== undefined ? g.lastCutAt : g.lastDecreaseAt;
  const persisting = lastCut !== null && now - lastCut < 2 * p.decreaseCooldownMs;
  const served = recentPerMinute(g, now) / spendFactor(g, now, p);
  g.softTokensPerMinute = softCut(p, served, g.softTokensPerMinute ?? null);
  const base = Math.min(g.tokensPerMinute, tokenCeiling(g, p, now));
  setRate(g, Math.max(p.minTokensPerMinute, persisting ? base * p.decrease : base), now);
  g.lastDecreaseAt = now;
  g.decreases++;
}

/** Probing, a healthy stretch grows the soft ceiling and admits up to the probe ceiling under it. */
function increaseProbing(g: GovernorState, p: GovernorParams, seconds: number, now: number): void {
  if (g.softTokensPerMinute !== null && g.softTokensPerMinute !== undefined)
    g.softTokensPerMinute = softCreep(p, g.softTokensPerMinute, probeServed(g, p, now), seconds);
  setRate(g, tokenCeiling(g, p, now), now);
  g.concurrencyLimit = Math.min(p.maxConcurrency, g.concurrencyLimit + p.increaseConcurrency * seconds);
  g.increases++;
}

function decreaseTokens(g: GovernorState, p: GovernorParams, factor: number, now: number): void {
  setRate(g, Math.max(p.minTokensPerMinute, cutBase(g, p, factor, now) * factor), now);
  g.lastDecreaseAt = now;
  g.decreases++;
}

/*
 * Additive increase, per second of healthy reports rather than per report, so the ramp does not
 * depend on how many workers report or how often they flush.
 */
function increase(g: GovernorState, p: GovernorParams, seconds: number, now: number): void {
  // Scaled to the quota: the advertised one, else what the provider has been serving.
  const quota = g.providerTokensPerMinute ?? servedPerMinute(g, now) ?? 0;
  const step = Math.max(p.increaseTokensPerMinute, (p.increaseQuotaShare * quota) / spendFactor(g, now, p));
  setRate(g, Math.min(tokenCeiling(g, p, now), g.tokensPerMinute + step * seconds), now);
  g.concurrencyLimit = Math.min(p.maxConcurrency, g.concurrencyLimit + p.increaseConcurrency * seconds);
  g.increases++;
}

/**
 * Feeds worker reports in. The advertised quota caps the rate at once; throttles decrease
 * (once per cooldown) and may pause; remaining tokens below the low water slow down before
 * the wall; healthy reports after a quiet cooldown increase. `inFlight` is the units admitted now.
 */
export function observe(
  g: GovernorState,
  p: GovernorParams,
  obs: readonly ModelObservation[],
  now: number,
  inFlight: number,
): void {
  const w = foldObservations(obs, p.remainingLowWater);
  if (w.calls === 0) return;
  const failed = w.keyRefused + w.serverErrors > 0;
  if (failed) g.breaker ??= newBreaker(now);
  if (g.breaker) observeBreaker(g.breaker, breakerParams(p), w, now);
  recordEvents(g.served, now, w.tokens);
  recordRecent(g.recent, now, w.tokens);
  g.servedCalls ??= newRate(now);
  g.recentCalls ??= newRate(now);
  if (w.served > 0) recordEvents(g.servedCalls, now, w.served);
  recordRecent(g.recentCalls, now, w.calls);
  const probed = isProbing(g, p);
  g.firstReportAt ??= now;
  const previous = g.lastReportAt ?? now;
  g.lastReportAt = Math.max(previous, now);
  if (w.limit !== undefined) g.providerTokensPerMinute = w.limit;
  if (w.requestLimit !== undefined) g.providerRequestsPerMinute = w.requestLimit;
  const ceiling = tokenCeiling(g, p, now);
  if (probed && !isProbing(g, p)) statedAtLast(g, p, ceiling, now);
  if (g.tokensPerMinute > ceiling) setRate(g, ceiling, now);

  if (w.latency.calls > 0) observeLatency((g.latency ??= newLatency(now)), p, w.latency, now);

  const coolingDown = g.lastDecreaseAt !== null && now - g.lastDecreaseAt < p.decreaseCooldownMs;
  const spending = recentPerMinute(g, now);
  if (w.throttled > 0) {
    g.lastThrottleAt = now;
    // A throttle cuts unless a throttle cut within the cooldown, whatever gentle slowdown came before.
    const lastCut = g.lastCutAt !== undefined ? g.lastCutAt : g.lastDecreaseAt;
    if (lastCut === null || now - lastCut >= p.decreaseCooldownMs)
      decreaseBy(g, p, p.decrease, now, inFlight);
    const until = pauseEnd(w, p, now);
    if (until > now) g.pausedUntil = Math.max(g.pausedUntil, until);
  } else if (
    (w.low && spending >= (g.providerTokensPerMinute ?? Infinity) * p.quotaShare) ||
    (w.lowRequests &&
      recentRate(g.recentCalls, now) >= (g.providerRequestsPerMinute ?? Infinity) * p.quotaShare)
  ) {
    /*
     * Near the wall: the provider's bucket is almost empty while Fairway spends its share or more.
     * Either it spends faster than the quota (estimates below real use, a burst) or other consumers
     * of the account take the rest (`remaining` counts their use too): both mean the wall is seconds
     * away, so give way gently, a third of a throttle's cut, before anyone is throttled.
     * Low remaining while spending less than the target is a bucket refilling: no reason to slow.
     * The same holds of remaining requests against the calls being made.
     */
    if (!coolingDown) decreaseTokens(g, p, 1 - (1 - p.decrease) / 3, now);
  } else if (congested(g.latency, p, now)) {
    // A provider queueing calls: give way gently, once per cooldown, before it refuses any.
    if (!coolingDown) decreaseTokens(g, p, p.latencyDecrease ?? 1, now);
  } else if (latencyElevated(g.latency)) {
    // Slower than the baseline but not for long yet: hold the rate.
  } else if (!failed || w.served > 0) {
    // Ramp up gently, by the quiet time since the last report: none until a cooldown after a throttle.
    // A window of failed calls only is no sign of health.
    const quietSince =
      g.lastThrottleAt === null ? previous : Math.max(previous, g.lastThrottleAt + p.decreaseCooldownMs);
    const seconds = Math.min(MAX_GROWTH_CREDIT_MS, now - quietSince) / 1000;
    if (seconds > 0) (isProbing(g, p) ? increaseProbing : increase)(g, p, seconds, now);
  }
}

/**
 * The provider stated a limit after the governor probed: admission goes where a chain that never
 * probed would be, its initial rate under the stated limit with a full bucket, so stated limits
 * win from their first report.
 */
function statedAtLast(g: GovernorState, p: GovernorParams, ceiling: number, now: number): void {
  setRate(g, clamp(Math.min(p.initialTokensPerMinute, ceiling), p.minTokensPerMinute, ceiling), now);
  g.tokens = Math.max(g.tokens, capacity(g));
}

/** The breaker's backoffs: the chain's own, else the defaults (a chain begun before they existed). */
export function breakerParams(p: GovernorParams): BreakerParams {
  const min = p.breakerProbeMinMs ?? BREAKER_DEFAULTS.probeMinMs;
  return { probeMinMs: min, probeMaxMs: Math.max(min, p.breakerProbeMaxMs ?? BREAKER_DEFAULTS.probeMaxMs) };
}

/**
 * When a window's Retry-After ends: from the calls' own time when the report says it (a report read
 * late does not stretch the pause), else from now; never beyond now + maxPauseMs, whatever a header
 * or a worker's clock claims.
 */
export function pauseEnd(w: ObservedWindow, p: GovernorParams, now: number): number {
  const cap = Math.max(0, Number.isFinite(p.maxPauseMs) ? p.maxPauseMs : 60_000);
  const until = Math.max(w.retryUntil, w.maxRetryAfterMs > 0 ? now + w.maxRetryAfterMs : 0);
  return Math.min(until, now + cap);
}

/** The limit that admission obeys (the limit grows in fractions of a slot; EPS absorbs their rounding). */
export function concurrencyCap(g: GovernorState): number {
  return Math.floor(g.concurrencyLimit + EPS);
}

/** What the scheduler's one-line summary shows of the governor (cheap: no dates, no rates). */
export function governorHead(
  g: GovernorState,
  now: number,
): Pick<GovernorStatus, 'concurrencyLimit' | 'tokensPerMinute' | 'throttledRecently'> {
  return {
    concurrencyLimit: concurrencyCap(g),
    tokensPerMinute: Math.round(g.tokensPerMinute),
    throttledRecently: g.lastThrottleAt !== null && now - g.lastThrottleAt < THROTTLE_RECENT_MS,
  };
}

export function governorStatus(g: GovernorState, now: number, p: GovernorParams): GovernorStatus {
  const status: GovernorStatus = {
    ...governorHead(g, now),
    pausedUntil: g.pausedUntil > now ? new Date(g.pausedUntil).toISOString() : null,
    lastThrottleAt: g.lastThrottleAt === null ? null : new Date(g.lastThrottleAt).toISOString(),
    decreases: g.decreases,
    increases: g.increases,
    breaker: breakerStatus(g.breaker, now),
  };
  if (g.providerTokensPerMinute !== null) status.providerTokensPerMinute = g.providerTokensPerMinute;
  if (g.firstReportAt !== null) status.servedTokensPerMinute = Math.round(ratePerSecond(g.served, now) * 60);
  if (g.providerRequestsPerMinute !== null && g.providerRequestsPerMinute !== undefined)
    status.providerRequestsPerMinute = g.providerRequestsPerMinute;
  const bound = requestBoundPerMinute(g, now);
  if (bound !== null) status.requestBoundTokensPerMinute = Math.round(bound);
  const recent = g.latency ? recentLatency(g.latency) : null;
  if (g.latency && g.latency.baselineMs !== null && recent !== null)
    status.congestion = {
      baselineMs: Math.round(g.latency.baselineMs),
      recentMs: Math.round(recent.ms),
      since: g.latency.since === null ? null : new Date(g.latency.since).toISOString(),
      congested: congested(g.latency, p, now),
    };
  return status;
}

import type { GovernorParams, GovernorStatus, ModelObservation } from './types';

/**
 * The token governor: an AIMD controller of the fleet's concurrency limit and
 * admitted tokens-per-minute, a token bucket that meters admitted estimated cost,
 * and a pause honouring the provider's Retry-After.
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
  decreases: number;
  increases: number;
}

/** "throttledRecently" in the status means a throttle within this window. */
export const THROTTLE_RECENT_MS = 60_000;
const EPS = 1e-6;

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

export function newGovernor(p: GovernorParams, now: number): GovernorState {
  const tpm = clamp(p.initialTokensPerMinute, p.minTokensPerMinute, p.maxTokensPerMinute);
  return {
    concurrencyLimit: p.maxConcurrency,
    tokensPerMinute: tpm,
    tokens: tpm,
    tokensAt: now,
    pausedUntil: 0,
    lastThrottleAt: null,
    lastDecreaseAt: null,
    decreases: 0,
    increases: 0,
  };
}

/*
 * The bucket holds one minute of tokens: the provider's quota is a per-minute window,
 * so a full minute's burst is what it tolerates, and anything smaller would starve
 * units whose estimate is a large share of the rate.
 */
function capacity(g: GovernorState): number {
  return g.tokensPerMinute;
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

export function take(g: GovernorState, cost: number): void {
  g.tokens -= cost;
}

/** Earliest instant ≥ now at which the bucket covers `cost` (pure). */
export function bucketReadyAt(g: GovernorState, cost: number, now: number): number {
  const short = need(g, cost) - EPS - tokensAt(g, now);
  return short <= 0 ? now : now + Math.ceil((short * 60_000) / g.tokensPerMinute);
}

export function isPaused(g: GovernorState, now: number): boolean {
  return now < g.pausedUntil;
}

function decreaseBy(g: GovernorState, p: GovernorParams, factor: number, now: number): void {
  refill(g, now);
  g.concurrencyLimit = Math.max(p.minConcurrency, Math.floor(g.concurrencyLimit * factor));
  g.tokensPerMinute = Math.max(p.minTokensPerMinute, g.tokensPerMinute * factor);
  g.tokens = Math.min(g.tokens, capacity(g));
  g.lastDecreaseAt = now;
  g.decreases++;
}

/** Feeds worker reports in: throttles decrease (once per cooldown) and may pause; healthy reports increase. */
export function observe(
  g: GovernorState,
  p: GovernorParams,
  obs: readonly ModelObservation[],
  now: number,
): void {
  const coolingDown = () => g.lastDecreaseAt !== null && now - g.lastDecreaseAt < p.decreaseCooldownMs;
  for (const o of obs) {
    if (o.throttled > 0) {
      g.lastThrottleAt = now;
      if (!coolingDown()) decreaseBy(g, p, p.decrease, now);
      if (o.maxRetryAfterMs > 0) g.pausedUntil = Math.max(g.pausedUntil, now + o.maxRetryAfterMs);
    }
  }
  for (const o of obs) {
    if (o.calls <= 0 || o.throttled > 0) continue;
    const low =
      o.remainingTokens !== undefined && o.limitTokens !== undefined && o.limitTokens > 0
        ? o.remainingTokens / o.limitTokens < p.remainingLowWater
        : false;
    if (low) {
      // Slow down before the wall: a third of the throttle's cut, with the same cooldown.
      if (!coolingDown()) decreaseBy(g, p, 1 - (1 - p.decrease) / 3, now);
    } else if (g.lastThrottleAt === null || now - g.lastThrottleAt >= p.decreaseCooldownMs) {
      // Ramp up gently: only once the storm has been quiet for a cooldown.
      refill(g, now);
      g.concurrencyLimit = Math.min(p.maxConcurrency, g.concurrencyLimit + p.increaseConcurrency);
      g.tokensPerMinute = Math.min(p.maxTokensPerMinute, g.tokensPerMinute + p.increaseTokensPerMinute);
      g.increases++;
    }
  }
}

/** The limit that admission obeys. */
export function concurrencyCap(g: GovernorState): number {
  return Math.floor(g.concurrencyLimit);
}

export function governorStatus(g: GovernorState, now: number): GovernorStatus {
  return {
    concurrencyLimit: concurrencyCap(g),
    tokensPerMinute: Math.round(g.tokensPerMinute),
    throttledRecently: g.lastThrottleAt !== null && now - g.lastThrottleAt < THROTTLE_RECENT_MS,
    pausedUntil: g.pausedUntil > now ? new Date(g.pausedUntil).toISOString() : null,
    lastThrottleAt: g.lastThrottleAt === null ? null : new Date(g.lastThrottleAt).toISOString(),
    decreases: g.decreases,
    increases: g.increases,
  };
}

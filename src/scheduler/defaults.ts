import type { GovernorParams } from './types';

/**
 * Governor defaults: start wide open on concurrency (the fleet setting binds until
 * the provider pushes back), never admit more than 80% of the provider's advertised
 * tokens per minute (the rest is other consumers' headroom), pause at most 60 s for a Retry-After, cut by 30% per throttle at most every 5 s, and win back 2 slots
 * and 5% of the quota (advertised, else served; at least 1k tokens/min) per second of
 * healthy reports once a cooldown has passed quietly; cut gently below 10% of the
 * provider's remaining tokens.
 */
export const DEFAULT_GOVERNOR: GovernorParams = {
  minConcurrency: 1,
  maxConcurrency: 10_000,
  decrease: 0.7,
  increaseConcurrency: 2,
  initialTokensPerMinute: 2_000_000,
  minTokensPerMinute: 10_000,
  maxTokensPerMinute: 100_000_000,
  increaseTokensPerMinute: 1_000,
  increaseQuotaShare: 0.05,
  quotaShare: 0.8,
  decreaseCooldownMs: 5_000,
  maxPauseMs: 60_000,
  remainingLowWater: 0.1,
};

/**
 * Probing a provider that states no limit: admission held to 3× the tokens served over the rate
 * window (a few-fold a minute from the floor), a 429 leaving a soft ceiling at 80% of what was
 * served over the last seconds, which grows 0.1% of what is served per second without a 429.
 */
export const PROBE_DEFAULTS: Required<
  Pick<GovernorParams, 'probeFactor' | 'probeDecrease' | 'probeIncreaseShare'>
> = { probeFactor: 3, probeDecrease: 0.8, probeIncreaseShare: 0.001 };

/**
 * The latency signal: served calls 3× slower than their baseline (per call and per token) for 10 s
 * cut the admitted rate by 10% per cooldown.
 */
export const LATENCY_DEFAULTS: Required<
  Pick<GovernorParams, 'latencyFactor' | 'latencySustainMs' | 'latencyDecrease'>
> = { latencyFactor: 3, latencySustainMs: 10_000, latencyDecrease: 0.9 };

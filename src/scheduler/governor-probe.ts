import type { GovernorParams } from './types';

/**
 * The governor's picture of a provider that states no limit (no `x-ratelimit-*` headers): the
 * probe ceiling, a multiple of what it served lately, so admission probes up from what is known
 * to pass rather than assuming the default allowance; and the soft ceiling a 429 leaves, a share
 * of what it served when it refused, which creeps up additively between 429s. Pure.
 */
export interface ProbeView {
  /** Estimated tokens per minute served lately (served over the spend factor). */
  served: number;
  /** The soft ceiling a 429 left; null before any. */
  soft: number | null;
}

/** Whether the chain probes: it was begun with `probeFactor` and the provider has stated no limit. */
export function probing(
  p: Pick<GovernorParams, 'probeFactor'>,
  providerTokensPerMinute: number | null,
  providerRequestsPerMinute: number | null | undefined,
): boolean {
  return (
    p.probeFactor !== undefined &&
    p.probeFactor > 1 &&
    providerTokensPerMinute === null &&
    (providerRequestsPerMinute ?? null) === null
  );
}

/** The most admission allows while probing: `probeFactor` × served, under the soft ceiling. */
export function probeCeiling(p: GovernorParams, v: ProbeView): number {
  const probe = Math.max(p.minTokensPerMinute, (p.probeFactor ?? 1) * v.served);
  return Math.min(probe, v.soft ?? Infinity);
}

/**
 * The soft ceiling after a 429 without stated limits: `probeDecrease` of what was served over the
 * last few seconds (the provider served what it could take), never above the ceiling before it.
 */
export function softCut(p: GovernorParams, recentServed: number, soft: number | null): number {
  const cut = Math.max(p.minTokensPerMinute, (p.probeDecrease ?? p.decrease) * recentServed);
  return Math.min(cut, soft ?? Infinity);
}

/** The soft ceiling after `seconds` without a 429: up by `probeIncreaseShare` of what is served, per second. */
export function softCreep(p: GovernorParams, soft: number, served: number, seconds: number): number {
  const step = (p.probeIncreaseShare ?? 0) * Math.max(served, soft);
  return Math.min(p.maxTokensPerMinute, soft + step * seconds);
}

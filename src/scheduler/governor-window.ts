import type { ModelObservation } from './types';

/** Worker reports folded into one: what the model plane looked like since the governor last heard. */
export interface ObservedWindow {
  calls: number;
  throttled: number;
  tokens: number;
  maxRetryAfterMs: number;
  /** Latest advertised limit in the batch. */
  limit: number | undefined;
  /** Some report saw remaining tokens below the low-water share of the limit. */
  low: boolean;
}

/** Sums the reports that saw calls; reports without calls are no evidence either way. */
export function foldObservations(obs: readonly ModelObservation[], lowWater: number): ObservedWindow {
  const w: ObservedWindow = {
    calls: 0,
    throttled: 0,
    tokens: 0,
    maxRetryAfterMs: 0,
    limit: undefined,
    low: false,
  };
  let limitAt = -Infinity;
  for (const o of obs) {
    if (!(o.calls > 0)) continue;
    w.calls += o.calls;
    w.throttled += Math.max(0, o.throttled);
    w.tokens += Math.max(0, o.tokens);
    w.maxRetryAfterMs = Math.max(w.maxRetryAfterMs, o.maxRetryAfterMs);
    const limit = o.limitTokens;
    if (limit === undefined || !Number.isFinite(limit) || limit < 0) continue;
    if (o.at >= limitAt) [w.limit, limitAt] = [limit, o.at];
    if (limit > 0 && o.remainingTokens !== undefined && o.remainingTokens / limit < lowWater) w.low = true;
  }
  return w;
}

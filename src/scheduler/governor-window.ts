import type { LatencySample } from './governor-latency';
import type { ModelObservation } from './types';

/** Worker reports folded into one: what the model plane looked like since the governor last heard. */
export interface ObservedWindow {
  calls: number;
  throttled: number;
  tokens: number;
  /** Largest Retry-After of the reports that did not say when it ends (older workers), ms. */
  maxRetryAfterMs: number;
  /** Latest end of a Retry-After in the batch (ms since epoch, reporter's clock), 0 when none. */
  retryUntil: number;
  /** Latest advertised limit in the batch. */
  limit: number | undefined;
  /** Some report saw remaining tokens below the low-water share of the limit. */
  low: boolean;
  /** Latest advertised requests-per-minute limit in the batch. */
  requestLimit: number | undefined;
  /** Some report saw remaining requests below the low-water share of their limit. */
  lowRequests: boolean;
  /** Calls the provider served (not throttled, refused or failed): what the tokens were spread over. */
  served: number;
  /** Calls refused for the key (401, 403, a key-level quota) and calls answered 5xx. */
  keyRefused: number;
  serverErrors: number;
  /** Served calls timed, their latency and tokens (none from older workers). */
  latency: LatencySample;
}

/** Sums the reports that saw calls; reports without calls are no evidence either way. */
export function foldObservations(obs: readonly ModelObservation[], lowWater: number): ObservedWindow {
  const w: ObservedWindow = {
    calls: 0,
    throttled: 0,
    tokens: 0,
    maxRetryAfterMs: 0,
    retryUntil: 0,
    limit: undefined,
    low: false,
    requestLimit: undefined,
    lowRequests: false,
    served: 0,
    keyRefused: 0,
    serverErrors: 0,
    latency: { calls: 0, ms: 0, tokens: 0 },
  };
  let limitAt = -Infinity;
  let requestLimitAt = -Infinity;
  for (const o of obs) {
    if (!(o.calls > 0)) continue;
    w.calls += o.calls;
    w.throttled += Math.max(0, o.throttled);
    w.tokens += Math.max(0, o.tokens);
    const refused = countOf(o.keyRefused);
    const errors = countOf(o.serverErrors);
    w.keyRefused += refused;
    w.serverErrors += errors;
    w.served += Math.max(0, o.calls - Math.max(0, o.throttled) - refused - errors);
    const timed = countOf(o.latencyCalls);
    if (timed > 0) {
      w.latency.calls += timed;
      w.latency.ms += countOf(o.latencyMs);
      w.latency.tokens += countOf(o.latencyTokens);
    }
    const wait = Number.isFinite(o.maxRetryAfterMs) ? Math.max(0, o.maxRetryAfterMs) : 0;
    // Only rate-limit 429s ask for a wait (a window without one holds only spend caps, or nothing).
    if (o.throttled > 0) {
      if (typeof o.retryUntil === 'number' && Number.isFinite(o.retryUntil))
        w.retryUntil = Math.max(w.retryUntil, o.retryUntil);
      else w.maxRetryAfterMs = Math.max(w.maxRetryAfterMs, wait);
    }
    const tokens = bucketOf(o.limitTokens, o.remainingTokens, lowWater);
    if (tokens) {
      if (o.at >= limitAt) [w.limit, limitAt] = [tokens.limit, o.at];
      w.low ||= tokens.low;
    }
    const requests = bucketOf(o.limitRequests, o.remainingRequests, lowWater);
    if (requests) {
      if (o.at >= requestLimitAt) [w.requestLimit, requestLimitAt] = [requests.limit, o.at];
      w.lowRequests ||= requests.low;
    }
  }
  return w;
}

/** A count a report may lack (older workers) or garble: 0 then. */
const countOf = (n: number | undefined): number =>
  typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;

/** One bucket of a report: its advertised limit (a count, else none), and whether it ran below the low water. */
function bucketOf(
  limit: number | undefined,
  remaining: number | undefined,
  lowWater: number,
): { limit: number; low: boolean } | null {
  if (limit === undefined || !Number.isFinite(limit) || limit < 0) return null;
  return { limit, low: limit > 0 && remaining !== undefined && remaining / limit < lowWater };
}

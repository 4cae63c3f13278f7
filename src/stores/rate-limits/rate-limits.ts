export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/** How a bucket refills: `ratePerSecond` tokens a second, at most `burst` held. A rate of 0: no limit. */
export interface BucketRule {
  ratePerSecond: number;
  burst: number;
}

/** A bucket as stored: the tokens it held at `at` (ms since the epoch). */
export interface BucketState {
  tokens: number;
  at: number;
}

/**
 * One take from a token bucket (absent: a full one). A take costing more than the burst is let
 * through when the bucket holds at least one token and leaves it in debt, so the caller then waits
 * `cost / rate` seconds, as if it had sent the items one by one.
 */
export function takeFrom(
  state: BucketState | undefined,
  rule: BucketRule,
  cost: number,
  now: number,
  mode: TakeMode = 'take',
): { next: BucketState; result: TakeResult } {
  const prev = state ?? { tokens: rule.burst, at: now };
  const elapsedSeconds = Math.max(0, now - prev.at) / 1000;
  const tokens = Math.min(rule.burst, prev.tokens + elapsedSeconds * rule.ratePerSecond);
  const at = Math.max(prev.at, now);
  const ok = tokens >= Math.min(1, cost);
  const spend = mode === 'charge' || (mode === 'take' && ok) ? cost : 0;
  return { next: { tokens: tokens - spend, at }, result: ok ? { ok: true } : refusal(tokens, rule) };
}

/**
 * `take`: charge `cost` when the bucket allows it (else refuse, charging nothing); `peek`: only say
 * whether it would; `charge`: charge `cost` whatever the bucket holds (work already let in).
 */
export type TakeMode = 'take' | 'peek' | 'charge';

/** The refusal of a bucket holding `tokens` (< 1): seconds until it holds one, at least 1. */
export function refusal(tokens: number, rule: BucketRule): TakeResult {
  const wait = (1 - tokens) / rule.ratePerSecond;
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
}

/**
 * Token buckets kept in the API store, so every API process on it draws on the same buckets: a
 * tenant's limit holds however many replicas serve it. Each take is one atomic read-and-write.
 */
export interface RateLimitStore {
  take(key: string, cost: number, rule: BucketRule, now: number, mode?: TakeMode): Promise<TakeResult>;
}

export const RATE_BUCKETS_DDL = `
  CREATE TABLE IF NOT EXISTS rate_buckets (
    key    TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    at     INTEGER NOT NULL
  );`;

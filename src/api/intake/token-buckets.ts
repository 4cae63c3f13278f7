export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * One token bucket per key (tenant): refills at `ratePerSecond`, holds at most `burst`.
 * A rate of 0 disables the limit. A request costs `cost` tokens (a batch: one per item); a request
 * costing more than the burst is let through when the bucket holds at least one token and leaves
 * it in debt, so the tenant then waits `cost / rate` seconds, as if it had sent the items one by one.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(key: string, cost = 1): TakeResult {
    if (this.ratePerSecond <= 0) return { ok: true };
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    const elapsedSeconds = Math.max(0, now - bucket.at) / 1000;
    bucket.tokens = Math.min(this.burst, bucket.tokens + elapsedSeconds * this.ratePerSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= Math.min(1, cost)) {
      bucket.tokens -= cost;
      return { ok: true };
    }
    const wait = (1 - bucket.tokens) / this.ratePerSecond;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
  }
}

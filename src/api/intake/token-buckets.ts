export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * One token bucket per key (tenant): refills at `ratePerSecond`, holds at most `burst`.
 * A rate of 0 disables the limit.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(key: string): TakeResult {
    if (this.ratePerSecond <= 0) return { ok: true };
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    const elapsedSeconds = Math.max(0, now - bucket.at) / 1000;
    bucket.tokens = Math.min(this.burst, bucket.tokens + elapsedSeconds * this.ratePerSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    const wait = (1 - bucket.tokens) / this.ratePerSecond;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
  }
}

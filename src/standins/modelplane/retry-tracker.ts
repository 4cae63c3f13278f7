/** Waits kept at most this long after they end, so steps that never came back cannot grow the table. */
const KEEP_MS = 10 * 60_000;
const PRUNE_AT = 50_000;

/**
 * Remembers, per call key, the earliest instant a throttled call was told it may come back,
 * and counts calls that came back sooner: a client that honours Retry-After keeps this at 0.
 */
export class RetryTracker {
  private readonly notBefore = new Map<string, number>();
  private early = 0;

  /** Calls that arrived before the Retry-After of their previous 429. */
  get earlyRetries(): number {
    return this.early;
  }

  /** A call arrives (before it is decided). */
  arrived(key: string | undefined, now: number): void {
    if (key === undefined) return;
    const at = this.notBefore.get(key);
    if (at !== undefined && now < at) this.early += 1;
  }

  /** The call was answered 429 with this wait (as sent: whole ms, at least 1). */
  throttled(key: string | undefined, now: number, waitMs: number): void {
    if (key === undefined) return;
    if (this.notBefore.size >= PRUNE_AT) this.prune(now);
    this.notBefore.set(key, now + waitMs);
  }

  /** The call was served: its step owes no wait any more. */
  served(key: string | undefined): void {
    if (key !== undefined) this.notBefore.delete(key);
  }

  private prune(now: number): void {
    for (const [key, at] of this.notBefore) if (at < now - KEEP_MS) this.notBefore.delete(key);
  }
}

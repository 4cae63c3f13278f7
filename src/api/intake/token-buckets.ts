import type { BucketRule, RateLimitStore, TakeMode, TakeResult } from '../../stores/rate-limits/rate-limits';

export type { TakeResult } from '../../stores/rate-limits/rate-limits';

/** A tenant's rate: one token bucket per key, taken from asynchronously. */
export interface RateBuckets {
  /** `mode` as in the store: take (default), peek, or charge regardless. */
  take(key: string, cost?: number, mode?: TakeMode): Promise<TakeResult>;
}

/**
 * The buckets of one rate (`scope`: request or submission) kept in the API store, so that every API
 * process on the store charges the same bucket: N replicas give a tenant its limit, not N times it.
 * Each refills at `ratePerSecond` and holds at most `burst`; a rate of 0 disables the limit; a take
 * costs `cost` tokens (see `takeFrom`).
 */
export class SharedBuckets implements RateBuckets {
  private readonly rule: BucketRule;

  constructor(
    private readonly store: RateLimitStore,
    private readonly scope: string,
    ratePerSecond: number,
    burst: number,
    private readonly now: () => number,
  ) {
    this.rule = { ratePerSecond, burst };
  }

  take(key: string, cost = 1, mode: TakeMode = 'take'): Promise<TakeResult> {
    if (this.rule.ratePerSecond <= 0) return Promise.resolve({ ok: true });
    return this.store.take(`${this.scope}:${key}`, cost, this.rule, this.now(), mode);
  }
}

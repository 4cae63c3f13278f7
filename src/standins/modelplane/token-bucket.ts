/** A per-minute quota as the simulator meters it: what is left, when it is back, and taking from it. */
export interface QuotaMeter {
  /** The quota per minute. */
  readonly limit: number;
  /** Whole units available at `now`. */
  remaining(now: number): number;
  /** Ms until the whole quota is available again (the providers' `x-ratelimit-reset-*`). */
  resetMs(now: number): number;
  /** Ms until `cost` units are available; 0 when they are now. */
  waitMs(cost: number, now: number): number;
  /** Removes `cost` units; callers check `waitMs` first. */
  take(cost: number, now: number): void;
  /** Changes the quota live. */
  setLimit(perMinute: number, now: number): void;
}

/**
 * A continuously refilling token bucket whose capacity is a per-minute quota,
 * the way hosted model providers meter tokens and requests.
 */
export class TokenBucket implements QuotaMeter {
  private level: number;
  private capacity: number;
  private updatedAt: number;

  /** Starts full: a fresh quota window has its whole allowance. */
  constructor(perMinute: number, now: number) {
    this.capacity = perMinute;
    this.level = perMinute;
    this.updatedAt = now;
  }

  /** The quota (capacity and per-minute refill). */
  get limit(): number {
    return this.capacity;
  }

  /** Whole units available at `now`. */
  remaining(now: number): number {
    this.refill(now);
    return Math.floor(this.level);
  }

  /** Ms until the bucket is full again (the providers' `x-ratelimit-reset-*`). */
  resetMs(now: number): number {
    this.refill(now);
    return this.msFor(this.capacity - this.level);
  }

  /**
   * Ms until `cost` units are available; 0 when they are now. A cost above the
   * capacity can never be met, so it is told to wait for a full bucket (or a
   * whole window when already full): retrying stays the right move, because a
   * quota cut is usually temporary and the call passes once it is lifted.
   */
  waitMs(cost: number, now: number): number {
    this.refill(now);
    if (cost <= this.level) return 0;
    if (cost > this.capacity) return this.msFor(this.capacity - this.level) || 60_000;
    return Math.max(1, this.msFor(cost - this.level));
  }

  /** Removes `cost` units; callers check `waitMs` first. */
  take(cost: number, now: number): void {
    this.refill(now);
    this.level -= cost;
  }

  /** Changes the quota live. A cut takes effect at once (a quota storm); a raise refills at the new rate. */
  setLimit(perMinute: number, now: number): void {
    this.refill(now);
    this.capacity = perMinute;
    this.level = Math.min(this.level, perMinute);
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.updatedAt);
    this.level = Math.min(this.capacity, this.level + (elapsed * this.capacity) / 60_000);
    this.updatedAt = now;
  }

  private msFor(units: number): number {
    if (units <= 0) return 0;
    if (this.capacity <= 0) return 60_000;
    return Math.ceil((units * 60_000) / this.capacity);
  }
}

/**
 * A quota counted per calendar minute (as some gateways count): the whole allowance comes back at
 * each minute boundary of the clock, nothing in between, so a window's reset is the time to the next
 * boundary. A cost above the quota waits for the next boundary, as in {@link TokenBucket}.
 */
export class CalendarWindow implements QuotaMeter {
  private capacity: number;
  private used = 0;
  private window: number;

  constructor(perMinute: number, now: number) {
    this.capacity = perMinute;
    this.window = Math.floor(now / 60_000);
  }

  get limit(): number {
    return this.capacity;
  }

  remaining(now: number): number {
    this.roll(now);
    return Math.max(0, Math.floor(this.capacity - this.used));
  }

  resetMs(now: number): number {
    this.roll(now);
    return this.used <= 0 ? 0 : (this.window + 1) * 60_000 - now;
  }

  waitMs(cost: number, now: number): number {
    this.roll(now);
    if (this.used + cost <= this.capacity) return 0;
    return Math.max(1, (this.window + 1) * 60_000 - now);
  }

  take(cost: number, now: number): void {
    this.roll(now);
    this.used += cost;
  }

  setLimit(perMinute: number, now: number): void {
    this.roll(now);
    this.capacity = perMinute;
  }

  private roll(now: number): void {
    const window = Math.floor(now / 60_000);
    if (window === this.window) return;
    this.window = window;
    this.used = 0;
  }
}

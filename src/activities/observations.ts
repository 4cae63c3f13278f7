import type { ModelObservation } from '../scheduler/types';

/** What one model call showed: reported by the model client for every answered call. */
export interface ModelCallSample {
  /** When the answer arrived, ms since epoch. */
  at: number;
  /** The provider answered 429 (rate limit or spend cap). */
  throttled: boolean;
  /** The 429 was the account's spend cap: no news about the rate, so not counted as a throttle. */
  spendCap?: boolean;
  /** The provider's requested wait from `at`, when it sent one it could parse. */
  retryAfterMs?: number;
  remainingTokens?: number;
  limitTokens?: number;
  resetTokensMs?: number;
  remainingRequests?: number;
  limitRequests?: number;
  resetRequestsMs?: number;
  /** Tokens served (0 for a refused call). */
  tokens: number;
  /** The call failed for the key (401, 403, a spend cap) or the server (5xx): what the key breaker counts. */
  fault?: 'key' | 'server';
  /** A served call's latency, sent to answered, ms. */
  latencyMs?: number;
  /** The model pool of the call's model (`MODELS.*.pool`); absent: the default pool. */
  pool?: string;
}

/** A rate-limit bucket's fields in a sample and in an observation: remaining, limit, reset. */
const BUCKETS = [
  ['remainingTokens', 'limitTokens', 'resetTokensMs'],
  ['remainingRequests', 'limitRequests', 'resetRequestsMs'],
] as const;
type BucketField = (typeof BUCKETS)[number][number];
/** A bucket as the call with its lowest remaining count saw it. */
type BucketPicture = Partial<Pick<ModelCallSample, BucketField>>;

/** `kept`, or the sample's picture of the bucket when it saw fewer remaining. */
function lowerOf(
  kept: BucketPicture | undefined,
  sample: ModelCallSample,
  fields: (typeof BUCKETS)[number],
): BucketPicture | undefined {
  const [remaining] = fields;
  const seen = sample[remaining];
  const before = kept?.[remaining];
  if (seen === undefined || (before !== undefined && seen >= before)) return kept;
  const picture: BucketPicture = {};
  for (const f of fields) picture[f] = sample[f];
  return picture;
}

/**
 * Accumulates call samples between flushes so the worker sends the scheduler
 * one observation per flush, never one per call: the scheduler workflow can
 * absorb only a limited rate of signals.
 */
export class ObservationWindow {
  /** @param maxPauseMs the longest wait one call can ask for (`MODEL_MAX_PAUSE_SECONDS`); longer ones are cut to it. */
  constructor(private readonly maxPauseMs = 60_000) {}

  private calls = 0;
  private retryUntil = 0;
  private throttled = 0;
  private maxRetryAfterMs = 0;
  private tokens = 0;
  private keyRefused = 0;
  private serverErrors = 0;
  private latencyCalls = 0;
  private latencyMs = 0;
  private latencyTokens = 0;
  /** Per bucket (BUCKETS), the picture of the call that saw the fewest remaining. */
  private lowest: (BucketPicture | undefined)[] = [];

  /** Adds one call's sample. */
  add(sample: ModelCallSample): void {
    this.calls += 1;
    // A spend cap is no news about the rate: it neither counts as a throttle nor asks the fleet to wait.
    if (sample.throttled && !sample.spendCap) {
      this.throttled += 1;
      const wait = Math.min(this.maxPauseMs, Math.max(0, sample.retryAfterMs ?? 0));
      this.maxRetryAfterMs = Math.max(this.maxRetryAfterMs, wait);
      // Measured from the call's own time, not from whenever the scheduler reads the report.
      if (wait > 0) this.retryUntil = Math.max(this.retryUntil, sample.at + wait);
    }
    this.tokens += sample.tokens;
    if (sample.fault === 'key') this.keyRefused += 1;
    if (sample.fault === 'server') this.serverErrors += 1;
    if (sample.latencyMs !== undefined && Number.isFinite(sample.latencyMs) && sample.latencyMs >= 0) {
      this.latencyCalls += 1;
      this.latencyMs += sample.latencyMs;
      this.latencyTokens += sample.tokens;
    }
    BUCKETS.forEach((fields, i) => (this.lowest[i] = lowerOf(this.lowest[i], sample, fields)));
  }

  /** Calls accumulated since the last drain. */
  get size(): number {
    return this.calls;
  }

  /** The window's aggregate ending at `now`, or null when no call was seen; either way the window restarts empty. */
  drain(now: number): ModelObservation | null {
    if (this.calls === 0) return null;
    const observation: ModelObservation = {
      at: now,
      calls: this.calls,
      throttled: this.throttled,
      maxRetryAfterMs: this.maxRetryAfterMs,
      tokens: this.tokens,
    };
    if (this.retryUntil > 0) observation.retryUntil = this.retryUntil;
    if (this.keyRefused > 0) observation.keyRefused = this.keyRefused;
    if (this.serverErrors > 0) observation.serverErrors = this.serverErrors;
    if (this.latencyCalls > 0) {
      observation.latencyCalls = this.latencyCalls;
      observation.latencyMs = Math.round(this.latencyMs);
      observation.latencyTokens = this.latencyTokens;
    }
    BUCKETS.forEach((fields, i) => {
      const picture = this.lowest[i];
      for (const f of fields) if (picture?.[f] !== undefined) observation[f] = picture[f];
    });
    this.calls = 0;
    this.throttled = 0;
    this.maxRetryAfterMs = 0;
    this.retryUntil = 0;
    this.tokens = 0;
    this.keyRefused = 0;
    this.serverErrors = 0;
    this.latencyCalls = 0;
    this.latencyMs = 0;
    this.latencyTokens = 0;
    this.lowest = [];
    return observation;
  }
}

/**
 * One ObservationWindow per model pool: a flush sends one observation per pool that saw calls, each
 * naming its pool (the default pool's names none), so a throttle of one pool paces only that pool.
 */
export class PoolObservations {
  private readonly windows = new Map<string, ObservationWindow>();

  constructor(private readonly maxPauseMs = 60_000) {}

  add(sample: ModelCallSample): void {
    const pool = sample.pool ?? '';
    let w = this.windows.get(pool);
    if (!w) {
      w = new ObservationWindow(this.maxPauseMs);
      this.windows.set(pool, w);
    }
    w.add(sample);
  }

  /** Each pool's aggregate ending at `now` (pools without calls give none); the windows restart empty. */
  drain(now: number): ModelObservation[] {
    const out: ModelObservation[] = [];
    for (const [pool, w] of this.windows) {
      const o = w.drain(now);
      if (o) out.push(pool === '' ? o : { ...o, pool });
    }
    return out;
  }
}

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
  private lowest: Pick<ModelCallSample, 'remainingTokens' | 'limitTokens' | 'resetTokensMs'> | undefined;
  private lowestRequests:
    Pick<ModelCallSample, 'remainingRequests' | 'limitRequests' | 'resetRequestsMs'> | undefined;

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
    const remaining = sample.remainingTokens;
    if (
      remaining !== undefined &&
      (this.lowest?.remainingTokens === undefined || remaining < this.lowest.remainingTokens)
    ) {
      this.lowest = {
        remainingTokens: remaining,
        limitTokens: sample.limitTokens,
        resetTokensMs: sample.resetTokensMs,
      };
    }
    const requests = sample.remainingRequests;
    if (
      requests !== undefined &&
      (this.lowestRequests?.remainingRequests === undefined ||
        requests < this.lowestRequests.remainingRequests)
    ) {
      this.lowestRequests = {
        remainingRequests: requests,
        limitRequests: sample.limitRequests,
        resetRequestsMs: sample.resetRequestsMs,
      };
    }
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
    if (this.lowest?.remainingTokens !== undefined) observation.remainingTokens = this.lowest.remainingTokens;
    if (this.lowest?.limitTokens !== undefined) observation.limitTokens = this.lowest.limitTokens;
    if (this.lowest?.resetTokensMs !== undefined) observation.resetTokensMs = this.lowest.resetTokensMs;
    const r = this.lowestRequests;
    if (r?.remainingRequests !== undefined) observation.remainingRequests = r.remainingRequests;
    if (r?.limitRequests !== undefined) observation.limitRequests = r.limitRequests;
    if (r?.resetRequestsMs !== undefined) observation.resetRequestsMs = r.resetRequestsMs;
    this.calls = 0;
    this.throttled = 0;
    this.maxRetryAfterMs = 0;
    this.retryUntil = 0;
    this.tokens = 0;
    this.lowest = undefined;
    this.lowestRequests = undefined;
    return observation;
  }
}

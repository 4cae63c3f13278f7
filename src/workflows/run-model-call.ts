import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { MODEL_KEY_REFUSED } from '../contract/model-call';
import { MODEL_CALL_NOT_RETRIED } from './run-activities';

/** The run's own backoff between attempts of a model call (the activity is not retried by Temporal). */
export const MODEL_CALL_RETRY = { initialMs: 1000, coefficient: 2, maxMs: 120_000 } as const;

/** What a failed attempt of a model call means for the next one. */
export interface ModelCallFailure {
  /** Whether the call is tried again (a transient fault), and after how long. */
  retry: boolean;
  delayMs: number;
  /**
   * The most the ledger may charge the failed attempt: its worst case when its outcome is unknown (a
   * call cut mid-flight is charged so, by its worker or by another worker's sweep), else what the
   * activity says it charged (0 for a call the provider refused or that never went).
   */
  charged: number;
}

/**
 * Reads a failed attempt of `modelCall` (the `tries`-th) whose worst case was `worst`. A timeout is
 * a worker that went away mid-call: the call may have been billed. Refusals that retrying cannot
 * fix end the run; any other fault is tried again after the provider's wait or the backoff (a
 * refused key: the backoff, at most the wait it names).
 */
export function modelCallFailure(err: unknown, worst: number, tries: number): ModelCallFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const backoff = Math.min(
    MODEL_CALL_RETRY.maxMs,
    MODEL_CALL_RETRY.initialMs * MODEL_CALL_RETRY.coefficient ** Math.max(0, tries - 1),
  );
  if (cause instanceof TimeoutFailure) return { retry: true, delayMs: backoff, charged: worst };
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0] as { usedTokens?: unknown } | undefined;
    const used = details?.usedTokens;
    const charged = typeof used === 'number' && Number.isFinite(used) && used > 0 ? Math.ceil(used) : 0;
    const retry = !cause.nonRetryable && !MODEL_CALL_NOT_RETRIED.includes(cause.type ?? '');
    const wait = typeof cause.nextRetryDelay === 'number' ? cause.nextRetryDelay : undefined;
    // A refused key's wait is the longest between the breaker's probes: the backoff grows up to it.
    const most = cause.type === MODEL_KEY_REFUSED && wait !== undefined ? Math.min(backoff, wait) : wait;
    const delayMs = most === undefined ? backoff : Math.min(MODEL_CALL_RETRY.maxMs, Math.max(1, most));
    return { retry, delayMs, charged };
  }
  return { retry: false, delayMs: 0, charged: 0 };
}

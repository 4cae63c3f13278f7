import {
  ActivityFailure,
  ApplicationFailure,
  RetryState,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { MODEL_CALL_RETRY, modelCallFailure } from '../../../src/workflows/run-model-call';

const activityFailed = (cause: Error) =>
  new ActivityFailure('failed', 'modelCall', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', cause);

/**
 * How the run reads a failed attempt of its model call: whether it tries again, after how long, and
 * what the failed attempt may have been charged (what the next attempt's reservation must not reuse).
 */
describe('modelCallFailure', () => {
  it('a worker gone mid-call (heartbeat timeout) may have been billed: its worst case, and a retry', () => {
    const f = modelCallFailure(
      activityFailed(new TimeoutFailure('heartbeat', undefined, TimeoutType.HEARTBEAT)),
      900,
      1,
    );
    expect(f).toEqual({ retry: true, delayMs: MODEL_CALL_RETRY.initialMs, charged: 900 });
  });

  it('an answered refusal charged nothing; a cut call says what it was charged', () => {
    const throttled = ApplicationFailure.create({ type: 'ModelThrottled', nextRetryDelay: 2500 });
    expect(modelCallFailure(activityFailed(throttled), 900, 3)).toEqual({
      retry: true,
      delayMs: 2500,
      charged: 0,
    });
    const cut = ApplicationFailure.create({ type: 'Error', details: [{ usedTokens: 900 }] });
    expect(modelCallFailure(activityFailed(cut), 900, 2)).toMatchObject({ retry: true, charged: 900 });
  });

  it('backs off ×2 up to its cap', () => {
    const plain = () => activityFailed(ApplicationFailure.create({ type: 'Error' }));
    expect(modelCallFailure(plain(), 1, 2).delayMs).toBe(2 * MODEL_CALL_RETRY.initialMs);
    expect(modelCallFailure(plain(), 1, 40).delayMs).toBe(MODEL_CALL_RETRY.maxMs);
  });

  it('a refused key is waited out: the backoff, at most the wait the refusal names', () => {
    const refused = () =>
      activityFailed(ApplicationFailure.create({ type: 'ModelKeyRefused', nextRetryDelay: 20_000 }));
    expect(modelCallFailure(refused(), 900, 1)).toEqual({
      retry: true,
      delayMs: MODEL_CALL_RETRY.initialMs,
      charged: 0,
    });
    expect(modelCallFailure(refused(), 900, 3).delayMs).toBe(4 * MODEL_CALL_RETRY.initialMs);
    expect(modelCallFailure(refused(), 900, 30).delayMs).toBe(20_000);
  });

  it('refusals that retrying cannot fix end the call', () => {
    for (const type of ['ModelRequestRejected', 'ModelSpendCap', 'ModelUnknown', 'ModelReservationShort'])
      expect(modelCallFailure(activityFailed(ApplicationFailure.create({ type })), 1, 1).retry).toBe(false);
    const nonRetryable = ApplicationFailure.create({ type: 'Other', nonRetryable: true });
    expect(modelCallFailure(activityFailed(nonRetryable), 1, 1).retry).toBe(false);
    expect(modelCallFailure(new Error('budget'), 1, 1).retry).toBe(false);
  });
});

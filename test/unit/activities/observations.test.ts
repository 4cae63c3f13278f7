import { describe, expect, it } from 'vitest';
import { ObservationWindow } from '../../../src/activities/observations';

describe('ObservationWindow', () => {
  it('is empty until a call is seen', () => {
    const w = new ObservationWindow();
    expect(w.drain(1000)).toBeNull();
    expect(w.size).toBe(0);
  });

  it('aggregates calls into one observation: counts, largest wait, lowest remaining with its limit and reset', () => {
    const w = new ObservationWindow();
    w.add({
      at: 1,
      throttled: false,
      tokens: 100,
      remainingTokens: 900,
      limitTokens: 1000,
      resetTokensMs: 6000,
    });
    w.add({
      at: 2,
      throttled: true,
      tokens: 0,
      retryAfterMs: 4000,
      remainingTokens: 50,
      limitTokens: 1000,
      resetTokensMs: 57_000,
    });
    w.add({
      at: 3,
      throttled: true,
      tokens: 0,
      retryAfterMs: 9000,
      remainingTokens: 80,
      limitTokens: 500,
      resetTokensMs: 1000,
    });
    w.add({ at: 4, throttled: false, tokens: 30 });
    expect(w.size).toBe(4);
    expect(w.drain(5000)).toEqual({
      at: 5000,
      calls: 4,
      throttled: 2,
      maxRetryAfterMs: 9000,
      remainingTokens: 50,
      limitTokens: 1000,
      resetTokensMs: 57_000,
      tokens: 130,
      // The 9-s wait ends 9 s after the call that asked for it, not after the drain.
      retryUntil: 9003,
    });
  });

  it('restarts empty after each drain', () => {
    const w = new ObservationWindow();
    w.add({ at: 1, throttled: true, tokens: 0, retryAfterMs: 9000, remainingTokens: 0, limitTokens: 10 });
    w.drain(2);
    expect(w.drain(3)).toBeNull();
    w.add({ at: 4, throttled: false, tokens: 5 });
    expect(w.drain(5)).toEqual({ at: 5, calls: 1, throttled: 0, maxRetryAfterMs: 0, tokens: 5 });
  });
});

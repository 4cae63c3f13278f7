import { describe, expect, it } from 'vitest';
import type { ModelObservation } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const report = (at: number, over: Partial<ModelObservation> = {}): ModelObservation => ({
  at,
  calls: 1,
  throttled: 0,
  maxRetryAfterMs: 0,
  tokens: 100,
  ...over,
});

/** A governor at its ceilings (100 slots, 100,000 tokens/min) with floors of 1 slot and 10,000 tokens/min. */
const quiet = () =>
  makeFleet({
    settings: { concurrency: 100 },
    governor: {
      minConcurrency: 1,
      maxConcurrency: 100,
      decrease: 0.7,
      increaseConcurrency: 2,
      initialTokensPerMinute: 100_000,
      minTokensPerMinute: 10_000,
      maxTokensPerMinute: 100_000,
      increaseTokensPerMinute: 1000,
      decreaseCooldownMs: 5000,
    },
    tenants: { a: { maxInFlight: 100 } },
  });

/** One run of 100 tokens every 10 s for a minute and more: the provider serves ~600 tokens a minute. */
function trickle(s: ReturnType<typeof quiet>, until: number): void {
  for (let t = T0; t <= until; t += 10_000) {
    s.submit(units('a', 1, 'interactive', 100, t), t);
    const [a] = s.admit(t);
    if (a) s.release([{ runId: a.runId, attempt: 0, usedTokens: 100, outcome: 'completed' }], t + 1000);
    s.observe([report(t + 1000)], t + 1000);
  }
}

describe('the governor on a quiet fleet', () => {
  it('does not drop to its floors on one stray 429', () => {
    const s = quiet();
    trickle(s, T0 + 60_000);
    const now = T0 + 61_500;
    s.submit(units('a', 1, 'interactive', 100, 999), now);
    s.admit(now);
    s.observe([report(now, { throttled: 1 })], now);
    const g = s.status(now).governor;
    // Cut from the targets (100 slots, 100,000 tokens/min), not from 1 in flight and ~600 served.
    expect(g.concurrencyLimit).toBe(70);
    expect(g.tokensPerMinute).toBe(70_000);
  });

  it('starts the token cut from the limit the provider states', () => {
    const s = quiet();
    trickle(s, T0 + 60_000);
    const now = T0 + 61_500;
    s.observe([report(now, { throttled: 1, limitTokens: 50_000, remainingTokens: 0 })], now);
    // 80 % of the stated 50,000, cut by 0.7.
    expect(s.status(now).governor.tokensPerMinute).toBe(28_000);
  });

  it('recovers with time after a throttle, however few reports come', () => {
    const s = quiet();
    s.submit(units('a', 80, 'standard', 100), T0);
    s.admit(T0);
    s.observe([report(T0, { throttled: 1, calls: 80 })], T0);
    const cut = s.status(T0).governor;
    expect(cut.concurrencyLimit).toBe(56);
    // Two reports in a minute.
    s.observe([report(T0 + 30_000)], T0 + 30_000);
    s.observe([report(T0 + 60_000)], T0 + 60_000);
    const g = s.status(T0 + 60_000).governor;
    // Each report credits up to 10 s of quiet at +2 slots and +1,000 tokens/min a second (one
    // second's credit per report would leave 60 slots and 72,000).
    expect(cut.tokensPerMinute).toBe(70_000);
    expect(g.concurrencyLimit).toBe(96);
    expect(g.tokensPerMinute).toBe(90_000);
  });
});

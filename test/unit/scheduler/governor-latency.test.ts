import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LATENCY_DEFAULTS } from '../../../src/scheduler/defaults';
import type { FleetScheduler, GovernorParams, ModelObservation } from '../../../src/scheduler';
import { T0, makeFleet } from './helpers';

const PARAMS: Partial<GovernorParams> = {
  minConcurrency: 2,
  maxConcurrency: 100,
  decrease: 0.5,
  increaseConcurrency: 1,
  initialTokensPerMinute: 100_000,
  minTokensPerMinute: 10_000,
  maxTokensPerMinute: 200_000,
  increaseTokensPerMinute: 1000,
  increaseQuotaShare: 0,
  quotaShare: 0.9,
  decreaseCooldownMs: 5000,
  remainingLowWater: 0.1,
  ...LATENCY_DEFAULTS,
};

const fleet = (over: Partial<GovernorParams> = {}): FleetScheduler =>
  makeFleet({ settings: { concurrency: 1000 }, governor: { ...PARAMS, ...over } });

/** A healthy report of `calls` served calls of `tokens` each, every one taking `ms`. */
const timed = (at: number, ms: number, tokens = 100, calls = 10): ModelObservation => ({
  at,
  calls,
  throttled: 0,
  maxRetryAfterMs: 0,
  tokens: tokens * calls,
  latencyCalls: calls,
  latencyMs: ms * calls,
  latencyTokens: tokens * calls,
});

/** Reports every second from `from` (exclusive) to `to` (inclusive), each from `report(t)`. */
function reportEach(
  s: FleetScheduler,
  from: number,
  to: number,
  report: (t: number) => ModelObservation,
): void {
  for (let t = from + 1000; t <= to; t += 1000) s.observe([report(t)], t);
}

const governor = (s: FleetScheduler, now: number) => s.status(now).governor;

describe('governor latency signal', () => {
  it('shows no congestion and keeps growing while latency is stable', () => {
    const s = fleet();
    reportEach(s, T0, T0 + 120_000, (t) => timed(t, 200 + ((t / 1000) % 7) * 20));
    const g = governor(s, T0 + 120_000);
    expect(g.congestion).toMatchObject({ since: null, congested: false });
    expect(g.congestion?.baselineMs).toBeGreaterThanOrEqual(200);
    expect(g.congestion?.baselineMs).toBeLessThan(340);
    expect(g.decreases).toBe(0);
    expect(g.tokensPerMinute).toBe(200_000);
  });

  it('does not take longer completions (or shorter ones) for congestion', () => {
    const s = fleet();
    // 50 ms a call plus 2 ms a token: 250 ms at 100 tokens, 20 s at 10,000, 52 ms at 1.
    const ms = (tokens: number) => 50 + 2 * tokens;
    reportEach(s, T0, T0 + 30_000, (t) => timed(t, ms(100), 100));
    reportEach(s, T0 + 30_000, T0 + 90_000, (t) => timed(t, ms(10_000), 10_000));
    reportEach(s, T0 + 90_000, T0 + 150_000, (t) => timed(t, ms(1), 1));
    const g = governor(s, T0 + 150_000);
    expect(g.congestion).toMatchObject({ since: null, congested: false });
    expect(g.decreases).toBe(0);
  });

  it('slows admission gently once latency stays above 3× its baseline, and not before', () => {
    const s = fleet({ initialTokensPerMinute: 150_000 });
    reportEach(s, T0, T0 + 20_000, (t) => timed(t, 200));
    // The recent measure spans a few seconds: the second slow report takes it past 3×.
    reportEach(s, T0 + 20_000, T0 + 22_000, (t) => timed(t, 2000));
    expect(governor(s, T0 + 22_000).congestion?.since).toBe(new Date(T0 + 22_000).toISOString());
    const before = governor(s, T0 + 22_000).tokensPerMinute;
    reportEach(s, T0 + 22_000, T0 + 31_000, (t) => timed(t, 2000));
    const held = governor(s, T0 + 31_000);
    expect(held.congestion?.congested).toBe(false);
    expect(held.congestion?.since).not.toBeNull();
    expect(held.decreases).toBe(0);
    expect(held.tokensPerMinute).toBe(before);

    reportEach(s, T0 + 31_000, T0 + 40_000, (t) => timed(t, 2000));
    const slowed = governor(s, T0 + 40_000);
    expect(slowed.congestion).toMatchObject({ congested: true });
    expect(slowed.congestion?.baselineMs).toBeLessThan(300);
    expect(slowed.congestion?.recentMs).toBeGreaterThan(1500);
    expect(slowed.concurrencyLimit).toBe(100);
    expect(slowed.throttledRecently).toBe(false);
    // Once per cooldown, by 10%: elevated at 22 s, congested from 32 s, cut at 32 s and 37 s.
    expect(slowed.decreases).toBe(2);
    expect(slowed.tokensPerMinute).toBe(Math.round(before * 0.9 * 0.9));
  });

  it('recovers additively once latency is back at its baseline', () => {
    const s = fleet();
    reportEach(s, T0, T0 + 20_000, (t) => timed(t, 200));
    reportEach(s, T0 + 20_000, T0 + 60_000, (t) => timed(t, 2000));
    const low = governor(s, T0 + 60_000).tokensPerMinute;
    expect(low).toBeLessThan(100_000);
    reportEach(s, T0 + 60_000, T0 + 90_000, (t) => timed(t, 200));
    const g = governor(s, T0 + 90_000);
    expect(g.congestion).toMatchObject({ since: null, congested: false });
    expect(g.tokensPerMinute).toBeGreaterThan(low);
    // +1000 tokens a minute per second, at most: additive, not back in one step.
    expect(g.tokensPerMinute).toBeLessThanOrEqual(low + 30 * 1000);
  });

  it('is off in a chain begun without a latency factor', () => {
    const s = fleet({ latencyFactor: undefined });
    reportEach(s, T0, T0 + 20_000, (t) => timed(t, 200));
    reportEach(s, T0 + 20_000, T0 + 60_000, (t) => timed(t, 5000));
    expect(governor(s, T0 + 60_000).decreases).toBe(0);
  });

  it('never slows below the governor floor, whatever the latency', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60_000 }), { minLength: 20, maxLength: 200 }), (lat) => {
        const s = fleet();
        lat.forEach((ms, i) => s.observe([timed(T0 + (i + 1) * 1000, ms)], T0 + (i + 1) * 1000));
        const g = governor(s, T0 + lat.length * 1000);
        expect(g.tokensPerMinute).toBeGreaterThanOrEqual(10_000);
        expect(g.concurrencyLimit).toBe(100);
      }),
      { numRuns: 100 },
    );
  });

  it('never takes latency proportional to tokens (a fixed part and a part per token) for congestion', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 20, maxLength: 200 }),
        (fixed, perToken, tokens) => {
          const s = fleet();
          tokens.forEach((n, i) => {
            const t = T0 + (i + 1) * 1000;
            s.observe([timed(t, fixed + perToken * n, n)], t);
          });
          const g = governor(s, T0 + tokens.length * 1000);
          expect(g.congestion?.since ?? null).toBeNull();
          expect(g.decreases).toBe(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});

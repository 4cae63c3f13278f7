import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import type { ModelObservation } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const throttled = (over: Partial<ModelObservation> = {}): ModelObservation => ({
  at: T0,
  calls: 10,
  throttled: 3,
  maxRetryAfterMs: 0,
  tokens: 1000,
  ...over,
});
const healthy = (over: Partial<ModelObservation> = {}): ModelObservation => ({
  at: T0,
  calls: 10,
  throttled: 0,
  maxRetryAfterMs: 0,
  tokens: 1000,
  ...over,
});

const governed = () =>
  makeFleet({
    settings: { concurrency: 1000 },
    governor: {
      minConcurrency: 2,
      maxConcurrency: 100,
      decrease: 0.5,
      increaseConcurrency: 1,
      initialTokensPerMinute: 100_000,
      minTokensPerMinute: 10_000,
      maxTokensPerMinute: 200_000,
      increaseTokensPerMinute: 1000,
      increaseQuotaShare: 0.05,
      quotaShare: 0.9,
      decreaseCooldownMs: 5000,
      remainingLowWater: 0.1,
    },
    tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } },
  });

/** A fleet with `n` units of 100 tokens admitted and running. */
function busy(n: number): FleetScheduler {
  const s = governed();
  s.submit(units('a', n), T0);
  expect(s.admit(T0).length).toBe(n);
  return s;
}

/** Healthy reports every `everyMs` from `from` (exclusive) to `to` (inclusive). */
function reportHealthy(s: FleetScheduler, from: number, to: number, everyMs: number, over = {}): void {
  for (let t = from + everyMs; t <= to; t += everyMs) s.observe([healthy({ at: t, ...over })], t);
}

describe('token governor (AIMD)', () => {
  it('cuts concurrency (from what is in flight) and tokens per minute on throttling, once per cooldown', () => {
    const s = busy(80);
    s.observe([throttled(), throttled()], T0);
    expect(s.status(T0).governor).toMatchObject({
      concurrencyLimit: 40,
      tokensPerMinute: 50_000,
      decreases: 1,
      throttledRecently: true,
    });
    s.observe([throttled()], T0 + 4999);
    expect(s.status(T0).governor.concurrencyLimit).toBe(40);
    s.observe([throttled()], T0 + 5000);
    expect(s.status(T0 + 5000).governor).toMatchObject({
      concurrencyLimit: 20,
      tokensPerMinute: 25_000,
      decreases: 2,
    });
  });

  it('never goes below its floors', () => {
    const s = busy(80);
    for (let i = 0; i < 30; i++) s.observe([throttled()], T0 + i * 10_000);
    expect(s.status(T0).governor).toMatchObject({ concurrencyLimit: 2, tokensPerMinute: 10_000 });
  });

  it('admits fewer units after a cut', () => {
    const s = governed();
    s.submit(units('a', 500), T0);
    // The bucket holds 5 s of 100k tokens/min: 8,333 tokens, 83 units of 100 in one go.
    expect(s.admit(T0).length).toBe(83);
    s.release(
      Array.from({ length: 100 }, (_, i) => ({
        runId: `a-standard-${i}`,
        attempt: 0,
        usedTokens: 100,
        outcome: 'completed' as const,
      })),
      T0,
    );
    s.observe([throttled()], T0);
    // Nothing was in flight at the report: the limit is cut from itself (not to the floor), and the
    // bucket is smaller: 5 s of 50k tokens/min, 41 units of 100.
    expect(s.status(T0).governor.concurrencyLimit).toBe(50);
    expect(s.admit(T0 + 5000).length).toBe(41);
    expect(s.explain('a-standard-150', T0 + 5000)?.code).toBe('governor');
  });

  it('pauses admissions for the Retry-After the provider sent', () => {
    const s = governed();
    s.submit(units('a', 5), T0);
    s.observe([throttled({ maxRetryAfterMs: 2500 })], T0);
    expect(s.admit(T0 + 2499)).toEqual([]);
    expect(s.status(T0).governor.pausedUntil).toBe(new Date(T0 + 2500).toISOString());
    expect(s.explain('a-standard-0', T0)?.code).toBe('governor');
    expect(s.nextWakeAt(T0)).toBe(T0 + 2500);
    // The cut (nothing was in flight) starts from the limit: all 5 go once the pause ends.
    expect(s.status(T0).governor.concurrencyLimit).toBe(50);
    expect(s.admit(T0 + 2500).length).toBe(5);
  });

  it('ramps up additively per second of healthy reports, only after a quiet cooldown', () => {
    const s = busy(80);
    s.observe([throttled()], T0);
    reportHealthy(s, T0, T0 + 4900, 100);
    expect(s.status(T0 + 4900).governor).toMatchObject({ concurrencyLimit: 40, increases: 0 });
    reportHealthy(s, T0 + 4900, T0 + 7000, 100);
    // 2 s of quiet reports after the 5 s cooldown: +2 slots, +2 × 1000 tokens/min.
    expect(s.status(T0 + 7000).governor).toMatchObject({ concurrencyLimit: 42, tokensPerMinute: 52_000 });
    reportHealthy(s, T0 + 7000, T0 + 1_000_000, 1000);
    expect(s.status(T0).governor).toMatchObject({ concurrencyLimit: 100, tokensPerMinute: 200_000 });
  });

  it('grows by time, not by the number of reports or reporters', () => {
    const often = busy(80);
    const seldom = busy(80);
    for (const s of [often, seldom]) s.observe([throttled()], T0);
    reportHealthy(often, T0, T0 + 20_000, 50);
    for (let t = T0 + 1000; t <= T0 + 20_000; t += 1000) seldom.observe([healthy(), healthy(), healthy()], t);
    const a = often.status(T0 + 20_000).governor;
    const b = seldom.status(T0 + 20_000).governor;
    expect(a.tokensPerMinute).toBe(b.tokensPerMinute);
    expect(a.concurrencyLimit).toBe(b.concurrencyLimit);
    expect(a.tokensPerMinute).toBe(50_000 + 15 * 1000);
  });

  it("tracks the provider's advertised quota: capped at once, recovered additively", () => {
    const s = governed();
    // (No tokens served in these reports, so the spend factor stays out of it.)
    s.submit(units('a', 2000, 'standard', 1000), T0);
    s.observe([healthy({ limitTokens: 60_000, remainingTokens: 60_000, tokens: 0 })], T0);
    expect(s.status(T0).governor).toMatchObject({ tokensPerMinute: 54_000, providerTokensPerMinute: 60_000 });
    // The bucket never holds more than five seconds of the capped rate (4,500 tokens).
    expect(s.admit(T0).length).toBe(4);
    reportHealthy(s, T0, T0 + 10_000, 100, { limitTokens: 60_000, remainingTokens: 60_000, tokens: 0 });
    expect(s.status(T0 + 10_000).governor.tokensPerMinute).toBe(54_000);
    // A cut to 30%: the very next report caps the rate at 90% of the new quota, without a throttle.
    s.observe(
      [healthy({ at: T0 + 10_100, limitTokens: 18_000, remainingTokens: 18_000, tokens: 0 })],
      T0 + 10_100,
    );
    expect(s.status(T0 + 10_100).governor).toMatchObject({ tokensPerMinute: 16_200, decreases: 0 });
    // Restored: back up by 5% of the quota (3000/min) per second of healthy reports, not in one jump.
    s.observe(
      [healthy({ at: T0 + 10_200, limitTokens: 60_000, remainingTokens: 18_000, tokens: 0 })],
      T0 + 10_200,
    );
    expect(s.status(T0 + 10_200).governor.tokensPerMinute).toBeCloseTo(16_200 + 300, 0);
    reportHealthy(s, T0 + 10_200, T0 + 20_200, 100, {
      limitTokens: 60_000,
      remainingTokens: 30_000,
      tokens: 0,
    });
    expect(s.status(T0 + 20_200).governor.tokensPerMinute).toBeCloseTo(16_500 + 30_000, 0);
    reportHealthy(s, T0 + 20_200, T0 + 40_200, 100, {
      limitTokens: 60_000,
      remainingTokens: 60_000,
      tokens: 0,
    });
    expect(s.status(T0 + 40_200).governor.tokensPerMinute).toBe(54_000);
  });

  it('cuts from the rate the provider actually served once it has been measured', () => {
    const s = governed();
    s.submit(units('a', 100_000, 'standard', 100), T0);
    // Units spend their estimate, but the provider (shared, sending no headers) serves at most
    // 50 tokens per 100 ms, 30k a minute, whatever the governor admits.
    const run = (from: number, to: number) => {
      for (let t = from + 100; t <= to; t += 100) {
        const admitted = s.admit(t);
        s.release(
          admitted.map((x) => ({
            runId: x.runId,
            attempt: 0,
            usedTokens: 100,
            outcome: 'completed' as const,
          })),
          t,
        );
        s.observe([healthy({ at: t, tokens: Math.min(50, 100 * admitted.length) })], t);
      }
    };
    run(T0, T0 + 10_000);
    // Not measured over a full window yet: the cut starts from the admitted rate.
    const before = s.status(T0 + 10_000).governor.tokensPerMinute;
    s.observe([throttled({ at: T0 + 10_000, tokens: 0 })], T0 + 10_000);
    expect(Math.abs(s.status(T0 + 10_000).governor.tokensPerMinute - before * 0.5)).toBeLessThanOrEqual(1);
    run(T0 + 10_000, T0 + 120_000);
    const g = s.status(T0 + 120_000).governor;
    expect(g.servedTokensPerMinute).toBeGreaterThan(28_000);
    expect(g.servedTokensPerMinute).toBeLessThan(32_000);
    expect(g.tokensPerMinute).toBeGreaterThan(100_000);
    s.observe([throttled({ at: T0 + 120_000, tokens: 0 })], T0 + 120_000);
    const cut = s.status(T0 + 120_000).governor.tokensPerMinute;
    expect(cut).toBeGreaterThan(14_000);
    expect(cut).toBeLessThan(16_000);
  });

  it('ignores reports without calls', () => {
    const s = governed();
    s.observe([healthy({ calls: 0 }), throttled({ calls: 0 })], T0);
    expect(s.status(T0).governor).toMatchObject({ increases: 0, decreases: 0, throttledRecently: false });
  });

  it('slows down before the wall: remaining tokens run low while it spends its share or more', () => {
    const s = busy(80);
    const quota = { limitTokens: 60_000 };
    // 5 s at 120k tokens/min (200 per 100 ms) while the provider's bucket still has plenty.
    reportHealthy(s, T0, T0 + 5000, 100, { ...quota, remainingTokens: 50_000, tokens: 200 });
    expect(s.status(T0 + 5000).governor).toMatchObject({ tokensPerMinute: 54_000, decreases: 0 });
    // The bucket runs low at that pace: the token rate is cut gently (a third of 50%), concurrency kept.
    reportHealthy(s, T0 + 5000, T0 + 5100, 100, { ...quota, remainingTokens: 2000, tokens: 200 });
    const g = s.status(T0 + 5100).governor;
    expect(g).toMatchObject({ decreases: 1, concurrencyLimit: 100, throttledRecently: false });
    expect(g.tokensPerMinute).toBe(Math.round(54_000 * (1 - 0.5 / 3)));
    // Spending only its share (57k/min: between 90% and 100% of the quota) and still the bucket stays
    // low: another consumer of the account takes the rest. Give way, gently, once per cooldown.
    reportHealthy(s, T0 + 5100, T0 + 20_000, 100, { ...quota, remainingTokens: 2000, tokens: 95 });
    const before = s.status(T0 + 20_000).governor;
    reportHealthy(s, T0 + 20_000, T0 + 29_000, 100, { ...quota, remainingTokens: 2000, tokens: 95 });
    const after = s.status(T0 + 29_000).governor;
    expect(after.decreases).toBeGreaterThan(before.decreases);
    expect(after.tokensPerMinute).toBeLessThan(before.tokensPerMinute);
    expect(after).toMatchObject({ concurrencyLimit: 100, throttledRecently: false });
  });

  it("caps the rate at the request limit's share when small calls make it the binding limit", () => {
    const s = governed();
    // 10 calls of 30 tokens each per report: 600 requests a minute carry 18,000 tokens a minute.
    const limits = {
      limitTokens: 60_000,
      remainingTokens: 60_000,
      limitRequests: 600,
      remainingRequests: 600,
    };
    s.observe([healthy({ ...limits, calls: 3, tokens: 90 })], T0);
    // Before five calls were served, tokens per call is unknown: the token limit caps alone.
    expect(s.status(T0).governor).toMatchObject({ tokensPerMinute: 54_000, providerRequestsPerMinute: 600 });
    reportHealthy(s, T0, T0 + 1000, 100, { ...limits, tokens: 300 });
    const g = s.status(T0 + 1000).governor;
    // 90% of 600 requests × 30 tokens: 16,200, below the token limit's 54,000.
    expect(g.requestBoundTokensPerMinute).toBe(18_000);
    expect(g.tokensPerMinute).toBeCloseTo(16_200, 0);
    // Larger calls (300 tokens) make the token limit bind again: the ceiling follows the measure up.
    reportHealthy(s, T0 + 1000, T0 + 120_000, 100, { ...limits, tokens: 3000 });
    expect(s.status(T0 + 120_000).governor.tokensPerMinute).toBe(54_000);
  });

  it('slows down before the wall when remaining requests run low while it calls at its share', () => {
    const s = busy(80);
    const limits = { limitTokens: 1_000_000, remainingTokens: 1_000_000, limitRequests: 600 };
    // 10 calls per 100 ms is 6,000 a minute, over 90% of the 600 allowed: low remaining requests mean the wall.
    reportHealthy(s, T0, T0 + 1000, 100, { ...limits, remainingRequests: 500, tokens: 1000 });
    const before = s.status(T0 + 1000).governor;
    expect(before.decreases).toBe(0);
    reportHealthy(s, T0 + 1000, T0 + 1100, 100, { ...limits, remainingRequests: 20, tokens: 1000 });
    const after = s.status(T0 + 1100).governor;
    expect(after).toMatchObject({ decreases: 1, concurrencyLimit: 100, throttledRecently: false });
    expect(after.tokensPerMinute).toBeLessThan(before.tokensPerMinute);
  });

  it('a throttle right after a gentle slowdown still cuts concurrency', () => {
    const gentleThenThrottle = () => {
      const s = busy(80);
      const quota = { limitTokens: 60_000 };
      reportHealthy(s, T0, T0 + 5000, 100, { ...quota, remainingTokens: 50_000, tokens: 200 });
      // The bucket runs low first (a busy machine delivered those reports before any 429) ...
      reportHealthy(s, T0 + 5000, T0 + 5100, 100, { ...quota, remainingTokens: 2000, tokens: 200 });
      expect(s.status(T0 + 5100).governor).toMatchObject({ decreases: 1, concurrencyLimit: 100 });
      // ... then the provider throttles, within the gentle slowdown's cooldown.
      s.observe([throttled({ at: T0 + 5200, ...quota })], T0 + 5200);
      return s.status(T0 + 5200).governor;
    };
    // The cut starts from the 80 in flight: half of them.
    expect(gentleThenThrottle()).toMatchObject({
      decreases: 2,
      concurrencyLimit: 40,
      throttledRecently: true,
    });
  });

  it('a throttle cuts once per cooldown after its own cut, whatever came between', () => {
    const s = busy(80);
    s.observe([throttled()], T0);
    expect(s.status(T0).governor).toMatchObject({ concurrencyLimit: 40, decreases: 1 });
    s.observe([throttled({ at: T0 + 4999 })], T0 + 4999);
    expect(s.status(T0 + 4999).governor).toMatchObject({ concurrencyLimit: 40, decreases: 1 });
    s.observe([throttled({ at: T0 + 5000 })], T0 + 5000);
    expect(s.status(T0 + 5000).governor).toMatchObject({ concurrencyLimit: 20, decreases: 2 });
  });

  it('keeps growing while a low bucket refills (spending well below the quota)', () => {
    const s = busy(80);
    reportHealthy(s, T0, T0 + 5000, 100, { limitTokens: 200_000, remainingTokens: 1000, tokens: 30 });
    // 4.9 s of growth at 5% of 200k per second.
    expect(s.status(T0 + 5000).governor.tokensPerMinute).toBe(100_000 + 4.9 * 10_000);
  });

  it('sizes admissions by what units really spend: three times their estimate admits a third', () => {
    const s = governed();
    s.submit(units('a', 100_000, 'standard', 100), T0);
    for (let t = T0; t <= T0 + 180_000; t += 100) {
      const admitted = s.admit(t);
      s.release(
        admitted.map((a) => ({ runId: a.runId, attempt: 0, usedTokens: 300, outcome: 'completed' as const })),
        t,
      );
      const tokens = 300 * admitted.length;
      s.observe([healthy({ at: t, tokens, limitTokens: 60_000, remainingTokens: 30_000 })], t);
    }
    const g = s.status(T0 + 180_000).governor;
    // 90% of the 60k quota is 54k real tokens a minute: 18k of estimates.
    expect(g.tokensPerMinute).toBeGreaterThan(16_000);
    expect(g.tokensPerMinute).toBeLessThan(20_000);
    expect(g.servedTokensPerMinute).toBeGreaterThan(48_000);
    expect(g.servedTokensPerMinute).toBeLessThan(60_000);
  });

  it('meters a top-up against the admission bucket, as it metered the estimate', () => {
    // 60,000 tokens a minute: the bucket holds 5 s of it (5,000). One unit of 1,000 in flight tops up 20,000.
    const fleet = (minSpendFactor?: number) => {
      const s = makeFleet({
        governor: {
          initialTokensPerMinute: 60_000,
          maxTokensPerMinute: 60_000,
          ...(minSpendFactor !== undefined ? { minSpendFactor } : {}),
        },
        tenants: { a: { maxInFlight: 100 } },
      });
      s.submit(units('a', 1, 'standard', 1000), T0);
      const [first] = s.admit(T0);
      expect(s.topUp(first!.runId, first!.attempt, 20_000, T0)).toMatchObject({ granted: true });
      s.submit(units('a', 1, 'standard', 1000, 1), T0);
      return s;
    };
    // The bucket is in debt by 16,000: the second unit waits for the refill (16 s at 1,000 a second).
    const metered = fleet(0.1);
    expect(metered.admit(T0 + 1000)).toHaveLength(0);
    expect(metered.admit(T0 + 17_100)).toHaveLength(1);
    // A chain begun before the setting meters estimates only: the second unit goes at once.
    expect(fleet().admit(T0 + 1000)).toHaveLength(1);
  });

  it('clears throttledRecently after a quiet minute', () => {
    const s = governed();
    s.observe([throttled()], T0);
    expect(s.status(T0 + 59_999).governor.throttledRecently).toBe(true);
    expect(s.status(T0 + 60_000).governor.throttledRecently).toBe(false);
    expect(s.status(T0).governor.lastThrottleAt).toBe(new Date(T0).toISOString());
  });

  it('survives continue-as-new, including snapshots taken before the quota tracking existed', () => {
    const s = busy(10);
    reportHealthy(s, T0, T0 + 2000, 100, { limitTokens: 60_000, remainingTokens: 60_000 });
    const snap = JSON.parse(JSON.stringify(s.snapshot()));
    const r = FleetScheduler.restore(snap);
    expect(r.status(T0 + 2000).governor).toEqual(s.status(T0 + 2000).governor);
    r.observe([healthy({ limitTokens: 30_000 })], T0 + 2100);
    s.observe([healthy({ limitTokens: 30_000 })], T0 + 2100);
    expect(r.status(T0 + 2100).governor).toEqual(s.status(T0 + 2100).governor);

    const old = JSON.parse(JSON.stringify(s.snapshot()));
    for (const k of ['providerTokensPerMinute', 'served', 'firstReportAt', 'lastReportAt'])
      delete old.governor[k];
    for (const k of ['increaseQuotaShare', 'quotaShare']) delete old.governorParams[k];
    const legacy = FleetScheduler.restore(old);
    legacy.observe([healthy({ limitTokens: 10_000 })], T0 + 3000);
    expect(legacy.status(T0 + 3000).governor.tokensPerMinute).toBe(10_000);
    expect(legacy.status(T0 + 3000).governor.providerTokensPerMinute).toBe(10_000);
  });
});

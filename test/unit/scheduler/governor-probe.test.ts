import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GOVERNOR, FleetScheduler, PROBE_DEFAULTS } from '../../../src/scheduler';
import type { GovernorParams, ModelObservation } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';
import { judge, runWorld } from './headerless-world';

const GOVERNOR: Partial<GovernorParams> = {
  ...DEFAULT_GOVERNOR,
  maxConcurrency: 1000,
  quotaShare: 0.95,
  ...PROBE_DEFAULTS,
};

/** A report of `calls` calls of 100 tokens each over the last second, `throttled` of them refused. */
const report = (at: number, calls: number, throttled = 0, over: Partial<ModelObservation> = {}) => ({
  at,
  calls,
  throttled,
  maxRetryAfterMs: 0,
  tokens: (calls - throttled) * 100,
  ...over,
});

function fleet(over: Partial<GovernorParams> = {}): FleetScheduler {
  const s = makeFleet({
    settings: { concurrency: 1000 },
    governor: { ...GOVERNOR, ...over },
    tenants: { a: { maxInFlight: 100_000, maxQueued: 100_000 } },
  });
  s.submit(units('a', 500), T0);
  s.admit(T0);
  return s;
}

/** Reports `callsPerSecond` healthy calls a second from `from` s to `to` s after T0. */
function serve(s: FleetScheduler, from: number, to: number, callsPerSecond: number): void {
  for (let t = from + 1; t <= to; t++) s.observe([report(T0 + t * 1000, callsPerSecond)], T0 + t * 1000);
}

const tpm = (s: FleetScheduler, at: number) => s.status(T0 + at * 1000).governor.tokensPerMinute;

describe('governor probing a provider that states no limit', () => {
  it('before any report, admits at its initial allowance as it always did', () => {
    expect(tpm(fleet(), 0)).toBe(DEFAULT_GOVERNOR.initialTokensPerMinute);
  });

  it('then holds admission to probeFactor × what was served, from its floor up', () => {
    const s = fleet();
    serve(s, 0, 1, 10);
    expect(tpm(s, 1)).toBe(DEFAULT_GOVERNOR.minTokensPerMinute);
    serve(s, 1, 120, 100); // 600,000 tokens a minute served for two minutes
    const served = s.status(T0 + 120_000).governor.servedTokensPerMinute!;
    expect(tpm(s, 120)).toBeGreaterThan(2 * served);
    expect(tpm(s, 120)).toBeLessThanOrEqual(PROBE_DEFAULTS.probeFactor * served + 1);
  });

  it('a chain without probeFactor keeps its allowance until a 429 (the old behaviour)', () => {
    const s = fleet({ probeFactor: undefined });
    serve(s, 0, 30, 10);
    expect(tpm(s, 30)).toBeGreaterThanOrEqual(DEFAULT_GOVERNOR.initialTokensPerMinute);
  });

  it('a 429 cuts to probeDecrease of the recently served rate, not of in-flight units or the default', () => {
    const s = fleet();
    serve(s, 0, 60, 10); // 60,000 tokens a minute
    const served = 60_000;
    s.observe([report(T0 + 61_000, 10, 2)], T0 + 61_000);
    const cut = tpm(s, 61);
    expect(cut).toBeGreaterThan(PROBE_DEFAULTS.probeDecrease * served * 0.95);
    expect(cut).toBeLessThan(served);
  });

  it('the soft ceiling then grows additively, by probeIncreaseShare of what is served a second', () => {
    const s = fleet();
    serve(s, 0, 60, 10);
    s.observe([report(T0 + 61_000, 10, 2)], T0 + 61_000);
    const cut = tpm(s, 61);
    // No growth within the cooldown, then about 0.3% of the 60,000 served per second.
    serve(s, 61, 66, 10);
    expect(tpm(s, 66)).toBe(cut);
    serve(s, 66, 86, 10);
    const grown = tpm(s, 86) - cut;
    const perSecond = PROBE_DEFAULTS.probeIncreaseShare * 60_000;
    expect(grown).toBeGreaterThan(20 * perSecond * 0.8);
    expect(grown).toBeLessThan(20 * perSecond * 1.3);
  });

  it('a stated limit wins at once, over the probe and the soft ceiling', () => {
    const s = fleet();
    serve(s, 0, 60, 10);
    s.observe([report(T0 + 61_000, 10, 2)], T0 + 61_000);
    s.observe(
      [report(T0 + 62_000, 10, 0, { limitTokens: 1_000_000, remainingTokens: 900_000 })],
      T0 + 62_000,
    );
    expect(tpm(s, 62)).toBe(950_000);
  });

  it('keeps its soft ceiling across a snapshot; a snapshot from before it probes as it did', () => {
    const s = fleet();
    serve(s, 0, 60, 10);
    s.observe([report(T0 + 61_000, 10, 2)], T0 + 61_000);
    const snap = s.snapshot();
    const restored = FleetScheduler.restore(snap);
    expect(restored.status(T0 + 61_000).governor).toEqual(s.status(T0 + 61_000).governor);
    serve(s, 61, 90, 10);
    serve(restored, 61, 90, 10);
    expect(tpm(restored, 90)).toBe(tpm(s, 90));

    const old = JSON.parse(JSON.stringify(snap));
    delete old.governor.softTokensPerMinute;
    delete old.governorParams.probeFactor;
    delete old.governorParams.probeDecrease;
    delete old.governorParams.probeIncreaseShare;
    const before = FleetScheduler.restore(old);
    serve(before, 61, 90, 10);
    expect(tpm(before, 90)).toBeGreaterThan(tpm(s, 90));
  });

  it('is deterministic: the same reports give the same limits', () => {
    const run = () => runWorld(GOVERNOR as GovernorParams, { seconds: 120 }).map((x) => x.governorTpm);
    expect(run()).toEqual(run());
  });

  it('converges under a hidden limit: few throttled calls, the limit used', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 40, max: 300 }).map((k) => k * 1000),
        fc.double({ min: 1.5, max: 4, noNaN: true }),
        (limit, load) => {
          const w = runWorld(GOVERNOR as GovernorParams, { limit, load, seconds: 360 });
          const j = judge(w, limit, 180);
          expect(j.throttledShare).toBeLessThan(0.015);
          expect(j.utilisation).toBeGreaterThan(0.9);
        },
      ),
      { numRuns: 6, seed: 33 },
    );
  });
});

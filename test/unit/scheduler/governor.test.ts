import { describe, expect, it } from 'vitest';
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
      decreaseCooldownMs: 5000,
      remainingLowWater: 0.1,
    },
    tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } },
  });

describe('token governor (AIMD)', () => {
  it('cuts concurrency and tokens per minute multiplicatively on throttling, once per cooldown', () => {
    const s = governed();
    s.observe([throttled(), throttled()], T0);
    expect(s.status(T0).governor).toMatchObject({
      concurrencyLimit: 50,
      tokensPerMinute: 50_000,
      decreases: 1,
      throttledRecently: true,
    });
    s.observe([throttled()], T0 + 4999);
    expect(s.status(T0).governor.concurrencyLimit).toBe(50);
    s.observe([throttled()], T0 + 5000);
    expect(s.status(T0 + 5000).governor).toMatchObject({
      concurrencyLimit: 25,
      tokensPerMinute: 25_000,
      decreases: 2,
    });
  });

  it('never goes below its floors', () => {
    const s = governed();
    for (let i = 0; i < 30; i++) s.observe([throttled()], T0 + i * 10_000);
    expect(s.status(T0).governor).toMatchObject({ concurrencyLimit: 2, tokensPerMinute: 10_000 });
  });

  it('admits fewer units after a cut', () => {
    const s = governed();
    s.submit(units('a', 500), T0);
    s.observe([throttled(), throttled()], T0);
    expect(s.admit(T0).length).toBe(50);
    expect(s.explain('a-standard-60', T0)?.code).toBe('governor');
  });

  it('pauses admissions for the Retry-After the provider sent', () => {
    const s = governed();
    s.submit(units('a', 5), T0);
    s.observe([throttled({ maxRetryAfterMs: 2500 })], T0);
    expect(s.admit(T0 + 2499)).toEqual([]);
    expect(s.status(T0).governor.pausedUntil).toBe(new Date(T0 + 2500).toISOString());
    expect(s.explain('a-standard-0', T0)?.code).toBe('governor');
    expect(s.nextWakeAt(T0)).toBe(T0 + 2500);
    expect(s.admit(T0 + 2500).length).toBe(5);
  });

  it('ramps up additively on healthy reports, and only after a quiet cooldown', () => {
    const s = governed();
    s.observe([throttled()], T0);
    s.observe([healthy(), healthy()], T0 + 1000);
    expect(s.status(T0 + 1000).governor).toMatchObject({ concurrencyLimit: 50, increases: 0 });
    s.observe([healthy(), healthy()], T0 + 6000);
    expect(s.status(T0 + 6000).governor).toMatchObject({
      concurrencyLimit: 52,
      tokensPerMinute: 52_000,
      increases: 2,
    });
    for (let i = 0; i < 200; i++) s.observe([healthy()], T0 + 10_000 + i);
    expect(s.status(T0).governor).toMatchObject({ concurrencyLimit: 100, tokensPerMinute: 200_000 });
  });

  it('ignores reports without calls', () => {
    const s = governed();
    s.observe([healthy({ calls: 0 })], T0);
    expect(s.status(T0).governor.increases).toBe(0);
  });

  it('slows down before the wall when remaining tokens run low', () => {
    const s = governed();
    s.observe([healthy({ remainingTokens: 5, limitTokens: 100 })], T0);
    const g = s.status(T0).governor;
    expect(g.increases).toBe(0);
    expect(g.concurrencyLimit).toBeLessThan(100);
    expect(g.concurrencyLimit).toBeGreaterThan(50);
    s.observe([healthy({ remainingTokens: 50, limitTokens: 100 })], T0 + 1);
    expect(s.status(T0).governor.increases).toBe(1);
  });

  it('clears throttledRecently after a quiet minute', () => {
    const s = governed();
    s.observe([throttled()], T0);
    expect(s.status(T0 + 59_999).governor.throttledRecently).toBe(true);
    expect(s.status(T0 + 60_000).governor.throttledRecently).toBe(false);
    expect(s.status(T0).governor.lastThrottleAt).toBe(new Date(T0).toISOString());
  });
});

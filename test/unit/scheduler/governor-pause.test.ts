import { describe, expect, it } from 'vitest';
import { ObservationWindow } from '../../../src/activities/observations';
import { DEFAULT_GOVERNOR } from '../../../src/scheduler';
import type { ModelObservation } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const DAY = 86_400_000;
const fleet = () => {
  const s = makeFleet({
    settings: { concurrency: 1000 },
    governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000 },
    tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } },
  });
  s.submit(units('a', 5), T0);
  return s;
};
const obs = (over: Partial<ModelObservation>): ModelObservation => ({
  at: T0,
  calls: 1,
  throttled: 1,
  maxRetryAfterMs: 0,
  tokens: 0,
  ...over,
});
const pausedUntil = (s: ReturnType<typeof fleet>, now: number) => s.status(now).governor.pausedUntil;

describe('a governor a header cannot break', () => {
  it('pauses at most maxPauseMs for a Retry-After of a day (from an older worker that sent it raw)', () => {
    const s = fleet();
    s.observe([obs({ maxRetryAfterMs: DAY })], T0);
    expect(pausedUntil(s, T0)).toBe(new Date(T0 + 60_000).toISOString());
    expect(s.admit(T0 + 60_000).length).toBeGreaterThan(0);
  });

  it('pauses at most maxPauseMs when a report claims its wait ends tomorrow', () => {
    const s = fleet();
    s.observe([obs({ retryUntil: T0 + DAY, maxRetryAfterMs: DAY })], T0);
    expect(pausedUntil(s, T0)).toBe(new Date(T0 + 60_000).toISOString());
  });

  it('measures the pause from the call, not from when the scheduler reads the report', () => {
    const s = fleet();
    // The call at T0 was told to wait 10 s; the report arrives 8 s later: 2 s of pause are left.
    s.observe([obs({ at: T0, retryUntil: T0 + 10_000, maxRetryAfterMs: 10_000 })], T0 + 8000);
    expect(pausedUntil(s, T0 + 8000)).toBe(new Date(T0 + 10_000).toISOString());
    // A report read after its wait ended does not pause at all.
    const late = fleet();
    late.observe([obs({ retryUntil: T0 + 10_000, maxRetryAfterMs: 10_000 })], T0 + 20_000);
    expect(pausedUntil(late, T0 + 20_000)).toBeNull();
  });

  it('never pauses the fleet for a window of spend-cap 429s only', () => {
    const s = fleet();
    // An older worker counted the spend cap's wait but not a throttle.
    s.observe([obs({ throttled: 0, maxRetryAfterMs: 30_000 })], T0);
    expect(pausedUntil(s, T0)).toBeNull();
    expect(s.admit(T0).length).toBeGreaterThan(0);
  });
});

describe('ObservationWindow (the worker side of the pause)', () => {
  it('caps each wait at the maximum pause and dates it from its call', () => {
    const w = new ObservationWindow(60_000);
    w.add({ at: 1000, throttled: true, tokens: 0, retryAfterMs: DAY });
    w.add({ at: 5000, throttled: true, tokens: 0, retryAfterMs: 2000 });
    expect(w.drain(9000)).toMatchObject({ throttled: 2, maxRetryAfterMs: 60_000, retryUntil: 61_000 });
  });

  it('keeps a spend cap out of the throttles and out of the largest Retry-After', () => {
    const w = new ObservationWindow(60_000);
    w.add({ at: 1000, throttled: true, spendCap: true, tokens: 0, retryAfterMs: 30_000 });
    w.add({ at: 1000, throttled: false, tokens: 10 });
    const o = w.drain(2000);
    expect(o).toMatchObject({ calls: 2, throttled: 0, maxRetryAfterMs: 0 });
    expect(o?.retryUntil).toBeUndefined();
  });
});

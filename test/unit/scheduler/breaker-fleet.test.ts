import { describe, expect, it } from 'vitest';
import { ObservationWindow } from '../../../src/activities/observations';
import { FleetScheduler } from '../../../src/scheduler';
import type { ModelObservation } from '../../../src/scheduler';
import { foldObservations } from '../../../src/scheduler/governor-window';
import { T0, makeFleet, units } from './helpers';

const MIN = 3000;
const MAX = 12_000;
const fleet = () => {
  const s = makeFleet({
    settings: { concurrency: 100 },
    governor: { breakerProbeMinMs: MIN, breakerProbeMaxMs: MAX },
    tenants: { a: { maxInFlight: 100, maxQueued: 1000 } },
  });
  return s;
};
const refusedCalls = (n: number, at = T0): ModelObservation => ({
  at,
  calls: n,
  throttled: 0,
  maxRetryAfterMs: 0,
  tokens: 0,
  keyRefused: n,
});
const servedCall = (at: number): ModelObservation => ({
  at,
  calls: 1,
  throttled: 0,
  maxRetryAfterMs: 0,
  tokens: 100,
});

describe('the key breaker in the scheduler', () => {
  it('pauses admission, explains it, probes with one unit after the backoff and resumes on a served call', () => {
    const s = fleet();
    s.submit(units('a', 3), T0);
    expect(s.admit(T0)).toHaveLength(3);
    s.submit(units('a', 10, 'standard', 100, 3), T0);
    s.observe([refusedCalls(3)], T0);

    expect(s.admit(T0 + 1)).toEqual([]);
    expect(s.status(T0 + 1).governor.breaker).toMatchObject({
      state: 'open',
      reason: 'key_refused',
      since: new Date(T0).toISOString(),
      nextProbeAt: new Date(T0 + MIN).toISOString(),
    });
    expect(s.explain('a-standard-5', T0 + 1)).toMatchObject({
      code: 'provider',
      message: expect.stringMatching(/refused the API key.*probe at .*running units wait/),
    });
    // The scheduler wakes for the probe: nothing else is due.
    expect(s.nextWakeAt(T0 + 1)).toBe(T0 + MIN);

    const probe = s.admit(T0 + MIN);
    expect(probe).toHaveLength(1);
    expect(s.status(T0 + MIN).governor.breaker).toMatchObject({ state: 'half_open', probes: 1 });
    expect(s.admit(T0 + MIN + 1)).toEqual([]);
    // The probe is refused too: open again, for twice the backoff.
    s.observe([refusedCalls(1, T0 + MIN + 10)], T0 + MIN + 10);
    expect(s.admit(T0 + MIN + 2 * MIN - 1)).toEqual([]);
    expect(s.admit(T0 + MIN + 10 + 2 * MIN)).toHaveLength(1);

    s.observe([servedCall(T0 + 20_000)], T0 + 20_000);
    expect(s.status(T0 + 20_000).governor.breaker).toMatchObject({ state: 'closed', probes: 2, trips: 1 });
    expect(s.explain('a-standard-12', T0 + 20_000)?.code).not.toBe('provider');
    expect(s.admit(T0 + 20_000)).toHaveLength(8);
  });

  it('keeps an open breaker across continue-as-new, and restores an older snapshot without one as closed', () => {
    const s = fleet();
    s.submit(units('a', 5), T0);
    s.observe([refusedCalls(5)], T0);
    const snap = JSON.parse(JSON.stringify(s.snapshot()));
    const restored = FleetScheduler.restore(snap);
    expect(restored.status(T0 + 1).governor.breaker?.state).toBe('open');
    expect(restored.admit(T0 + 1)).toEqual([]);
    expect(restored.admit(T0 + MIN)).toHaveLength(1);

    delete snap.governor.breaker;
    const old = FleetScheduler.restore(snap);
    expect(old.status(T0 + 1).governor.breaker?.state).toBe('closed');
    expect(old.admit(T0 + 1)).toHaveLength(5);
  });

  it('does not grow the limits on a window of refused calls, and a throttle does not open it', () => {
    const s = makeFleet({ governor: { initialTokensPerMinute: 100_000, maxTokensPerMinute: 1e9 } });
    s.observe([servedCall(T0)], T0);
    const before = s.status(T0).governor.tokensPerMinute;
    s.observe([{ ...refusedCalls(1, T0 + 5000) }], T0 + 5000);
    expect(s.status(T0 + 5000).governor.tokensPerMinute).toBe(before);
    const t = makeFleet();
    t.observe([{ at: T0, calls: 50, throttled: 50, maxRetryAfterMs: 0, tokens: 0 }], T0);
    expect(t.status(T0).governor.breaker?.state).toBe('closed');
  });

  it('counts refused and 5xx calls from the worker window, and serves only the rest', () => {
    const w = new ObservationWindow();
    w.add({ at: 1, throttled: false, tokens: 0, fault: 'key' });
    w.add({ at: 2, throttled: true, spendCap: true, tokens: 0, fault: 'key' });
    w.add({ at: 3, throttled: false, tokens: 0, fault: 'server' });
    w.add({ at: 4, throttled: false, tokens: 40 });
    const o = w.drain(5)!;
    expect(o).toMatchObject({ calls: 4, throttled: 0, keyRefused: 2, serverErrors: 1, tokens: 40 });
    expect(foldObservations([o], 0.1)).toMatchObject({ calls: 4, served: 1, keyRefused: 2, serverErrors: 1 });
    // An older worker's report carries neither count.
    expect(foldObservations([{ ...o, keyRefused: undefined, serverErrors: undefined }], 0.1).served).toBe(4);
    w.add({ at: 6, throttled: false, tokens: 10 });
    expect(w.drain(7)).not.toHaveProperty('keyRefused');
  });
});

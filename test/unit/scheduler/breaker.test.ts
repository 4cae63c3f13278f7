import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  STREAK_MS,
  TRIP_REFUSALS,
  TRIP_SERVER_ERRORS,
  breakerGate,
  breakerStatus,
  newBreaker,
  observeBreaker,
  probeSent,
} from '../../../src/scheduler/breaker';
import type { BreakerState, BreakerWindow } from '../../../src/scheduler/breaker';

const P = { probeMinMs: 2_000, probeMaxMs: 10_000 };
const win = (over: Partial<BreakerWindow>): BreakerWindow => ({
  served: 0,
  keyRefused: 0,
  serverErrors: 0,
  ...over,
});

/** A breaker opened for a refused key at `at`. */
function opened(at = 0): BreakerState {
  const b = newBreaker(at);
  observeBreaker(b, P, win({ keyRefused: TRIP_REFUSALS }), at);
  return b;
}

describe('the key breaker', () => {
  it('opens at TRIP_REFUSALS refused calls with none served, not before', () => {
    const b = newBreaker(0);
    for (let i = 1; i < TRIP_REFUSALS; i++) {
      observeBreaker(b, P, win({ keyRefused: 1 }), i * 100);
      expect(breakerGate(b, i * 100)).toBe('all');
    }
    observeBreaker(b, P, win({ keyRefused: 1 }), 1000);
    expect(b).toMatchObject({ state: 'open', reason: 'key_refused', since: 1000, probeAt: 3000, trips: 1 });
    expect(breakerGate(b, 2999)).toBe('none');
  });

  it('does not open when calls are served between the refusals, nor for refusals a streak apart', () => {
    const b = newBreaker(0);
    for (let i = 0; i < 10; i++) {
      observeBreaker(b, P, win({ keyRefused: TRIP_REFUSALS - 1 }), i * 10);
      observeBreaker(b, P, win({ served: 1 }), i * 10 + 5);
    }
    expect(b.state).toBe('closed');
    // A window with both is a key that works (for some calls at least).
    observeBreaker(b, P, win({ keyRefused: 50, served: 1 }), 200);
    expect(b.state).toBe('closed');
    const slow = newBreaker(0);
    for (let i = 0; i < 10; i++) observeBreaker(slow, P, win({ keyRefused: 1 }), i * (STREAK_MS + 1));
    expect(slow.state).toBe('closed');
  });

  it('opens for 5xx from every call at TRIP_SERVER_ERRORS; a refused key then names the reason', () => {
    const b = newBreaker(0);
    observeBreaker(b, P, win({ serverErrors: TRIP_SERVER_ERRORS - 1 }), 10);
    expect(b.state).toBe('closed');
    observeBreaker(b, P, win({ serverErrors: 1 }), 20);
    expect(b).toMatchObject({ state: 'open', reason: 'server_errors' });
    observeBreaker(b, P, win({ keyRefused: 1 }), 30);
    expect(b.reason).toBe('key_refused');
  });

  it('lets one probe through after the backoff, doubles it on a failed probe up to the cap, closes on a served call', () => {
    const b = opened(0);
    expect(breakerGate(b, 2000)).toBe('one');
    expect(breakerStatus(b, 2000).state).toBe('half_open');
    probeSent(b, 2000);
    expect(b).toMatchObject({ state: 'half_open', probes: 1 });
    // The probe said nothing yet: no second unit until another backoff has passed.
    expect(breakerGate(b, 2001)).toBe('none');
    expect(breakerGate(b, 4000)).toBe('one');
    const backoffs: number[] = [];
    for (let t = 4000; backoffs.length < 5;) {
      probeSent(b, t);
      observeBreaker(b, P, win({ keyRefused: 1 }), t + 1);
      expect(b.state).toBe('open');
      backoffs.push(b.backoffMs);
      t = b.probeAt;
    }
    expect(backoffs).toEqual([4000, 8000, 10_000, 10_000, 10_000]);
    observeBreaker(b, P, win({ served: 1 }), b.probeAt + 5);
    expect(b).toMatchObject({ state: 'closed', reason: null, since: null, refused: 0 });
    expect(breakerGate(b, b.probeAt + 5)).toBe('all');
    expect(breakerStatus(b, 0)).toMatchObject({ state: 'closed', nextProbeAt: null, probes: 6, trips: 1 });
  });

  it('shows an absent breaker as closed', () => {
    expect(breakerGate(undefined, 0)).toBe('all');
    expect(breakerStatus(undefined, 0)).toEqual({
      state: 'closed',
      reason: null,
      since: null,
      nextProbeAt: null,
      probes: 0,
      trips: 0,
    });
  });
});

type Step = { dt: number } & ({ kind: 'window'; w: BreakerWindow } | { kind: 'admit' });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    dt: fc.integer({ min: 0, max: 20_000 }),
    kind: fc.constant('window' as const),
    w: fc.record({
      served: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 })),
      keyRefused: fc.integer({ min: 0, max: 4 }),
      serverErrors: fc.integer({ min: 0, max: 12 }),
    }),
  }),
  fc.record({ dt: fc.integer({ min: 0, max: 20_000 }), kind: fc.constant('admit' as const) }),
);

describe('key breaker properties', () => {
  it('closes on any served call, opens only on a streak, backs off within bounds, and always probes again', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 80 }), (steps) => {
        const b = newBreaker(0);
        let now = 0;
        // The model: failures since the last served call, within STREAK_MS of each other.
        let refused = 0;
        let errors = 0;
        let lastFailure = 0;
        for (const step of steps) {
          now += step.dt;
          const before = b.state;
          if (step.kind === 'admit') {
            const gate = breakerGate(b, now);
            expect(gate === 'all').toBe(b.state === 'closed');
            if (gate === 'one') probeSent(b, now);
            if (gate !== 'all') expect(b.probeAt).toBeGreaterThan(now - 1);
            continue;
          }
          observeBreaker(b, P, step.w, now);
          if (step.w.served > 0) {
            [refused, errors] = [0, 0];
            expect(b.state).toBe('closed');
            continue;
          }
          if (step.w.keyRefused + step.w.serverErrors === 0) {
            expect(b.state).toBe(before);
            continue;
          }
          if (now - lastFailure > STREAK_MS) [refused, errors] = [0, 0];
          refused += step.w.keyRefused;
          errors += step.w.serverErrors;
          lastFailure = now;
          if (before === 'closed')
            expect(b.state !== 'closed').toBe(refused >= TRIP_REFUSALS || errors >= TRIP_SERVER_ERRORS);
          else expect(b.state).toBe('open');
          if (b.state !== 'closed') {
            expect(b.backoffMs).toBeGreaterThanOrEqual(P.probeMinMs);
            expect(b.backoffMs).toBeLessThanOrEqual(P.probeMaxMs);
            // Never shut for longer than the cap, and a probe is due once the backoff has passed.
            expect(b.probeAt).toBeLessThanOrEqual(now + P.probeMaxMs);
            expect(breakerGate(b, b.probeAt)).toBe('one');
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import type { Priority } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

/**
 * The door's bound on a lane's expected wait (`maxWaitSeconds`): 60,000 tokens a minute admit one
 * unit of 1,000 tokens a second, so the k-th unit queued expects to wait k seconds.
 */
const fleet = (maxWaitSeconds: Partial<Record<Priority, number>>) =>
  makeFleet({
    settings: { maxWaitSeconds },
    governor: { initialTokensPerMinute: 60_000, maxTokensPerMinute: 60_000 },
    tenants: { a: { maxQueued: 1000, maxInFlight: 1000 }, b: { maxQueued: 1000, maxInFlight: 1000 } },
  });
const codes = (rs: { accepted: boolean; code?: string }[]) => rs.map((r) => (r.accepted ? 'ok' : r.code));

describe("the door's bound on the expected wait", () => {
  it('sheds the unit that would wait longer than its lane allows, with the time until it fits', () => {
    const s = fleet({ standard: 10 });
    const answers = s.submit(units('a', 12, 'standard', 1000), T0);
    expect(codes(answers)).toEqual([...Array<string>(10).fill('ok'), 'wait_too_long', 'wait_too_long']);
    expect(answers[10]).toMatchObject({ retryAfterSeconds: 1 });
    expect((answers[10] as { message: string }).message).toMatch(
      /standard work would wait about 11 s; this lane's bound is 10 s/,
    );
    expect(s.status(T0).counters.shed).toBe(2);
    // Another tenant's queue is its own: its first unit expects a second.
    expect(codes(s.submit(units('b', 1, 'standard', 1000), T0))).toEqual(['ok']);
    // A lane without a bound takes everything; a lower lane counts the units ahead of it in higher ones.
    expect(codes(s.submit(units('a', 30, 'interactive', 1000), T0)).every((c) => c === 'ok')).toBe(true);
  });

  it('counts the units of the lanes above it: batch work waits behind interactive and standard', () => {
    const s = fleet({ batch: 10 });
    s.submit(units('a', 8, 'interactive', 1000), T0);
    s.submit(units('a', 1, 'standard', 1000), T0);
    expect(codes(s.submit(units('a', 3, 'batch', 1000), T0))).toEqual([
      'ok',
      'wait_too_long',
      'wait_too_long',
    ]);
  });

  it("adds the rest of a provider's pause to the wait", () => {
    const s = fleet({ standard: 10 });
    s.observe([{ at: T0, calls: 1, throttled: 1, maxRetryAfterMs: 30_000, tokens: 0 }], T0);
    const [r] = s.submit(units('a', 1, 'standard', 1000), T0);
    expect(r).toMatchObject({ accepted: false, code: 'wait_too_long' });
    // The pause ends in 30 s: the wait is back within the bound about 21 s from now.
    expect((r as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(21);
    expect((r as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(22);
  });

  it('lets retries of admitted runs in (that work was accepted before), and a patch removes the bound', () => {
    const s = fleet({ standard: 2 });
    expect(codes(s.submit(units('a', 3, 'standard', 1000), T0))).toEqual(['ok', 'ok', 'wait_too_long']);
    const retry = { runId: 'retried', tenant: 'a', priority: 'standard' as const, cost: 1000, attempt: 1 };
    expect(codes(s.submit([retry], T0))).toEqual(['ok']);
    s.patchSettings({ maxWaitSeconds: { standard: null } });
    expect(s.status(T0).config.maxWaitSeconds).toBeUndefined();
    expect(codes(s.submit(units('a', 5, 'standard', 1000, 10), T0))).toEqual(Array(5).fill('ok'));
  });

  it('survives a snapshot and restore with its bounds', () => {
    const s = fleet({ interactive: 5, batch: 600 });
    const back = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(back.status(T0).config.maxWaitSeconds).toEqual({ interactive: 5, batch: 600 });
  });
});

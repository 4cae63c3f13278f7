import { describe, expect, it } from 'vitest';
import { NO_PERIOD_RETRY_AFTER_S } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

describe('the batch door (checkBatch: all or nothing, read-only)', () => {
  it('accepts a batch that fits exactly and refuses one unit more, with the room left', () => {
    const s = makeFleet({ tenants: { a: { maxQueued: 10 } } });
    s.submit(units('a', 4), T0);
    expect(s.checkBatch('a', 6, 100, T0)).toBeNull();
    const r = s.checkBatch('a', 7, 100, T0);
    expect(r).toMatchObject({ code: 'queue_full' });
    expect(r?.message).toContain('room for 6');
    expect(r?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('waits longer for a batch that needs more room (Retry-After from the admission rate)', () => {
    const s = makeFleet({ settings: { concurrency: 10_000 }, tenants: { a: { maxQueued: 100 } } });
    for (let sec = 0; sec < 60; sec++) {
      s.submit(units('a', 1, 'standard', 10, sec), T0 + sec * 1000);
      s.admit(T0 + sec * 1000);
    }
    s.submit(units('a', 100, 'standard', 10, 1e6), T0 + 60_000);
    const small = s.checkBatch('a', 2, 10, T0 + 60_000)!.retryAfterSeconds;
    const large = s.checkBatch('a', 40, 10, T0 + 60_000)!.retryAfterSeconds;
    expect(large).toBeGreaterThan(small);
  });

  it("refuses past the fleet's queue cap", () => {
    const s = makeFleet({ settings: { globalMaxQueued: 5 }, tenants: { a: {}, b: {} } });
    s.submit(units('b', 3), T0);
    expect(s.checkBatch('a', 2, 1, T0)).toBeNull();
    expect(s.checkBatch('a', 3, 1, T0)).toMatchObject({ code: 'queue_full' });
  });

  it('refuses a batch its budget cannot cover, counting what is already queued', () => {
    const s = makeFleet({ tenants: { a: { budget: { tokens: 1000, period: 'none' } } } });
    s.submit(units('a', 2, 'standard', 100), T0); // 200 queued
    expect(s.checkBatch('a', 8, 100, T0)).toBeNull();
    const r = s.checkBatch('a', 9, 100, T0);
    expect(r).toMatchObject({ code: 'budget_exhausted', retryAfterSeconds: NO_PERIOD_RETRY_AFTER_S });
    expect(r?.message).toContain('900 asked');
  });

  it('answers unknown_tenant and draining like the unit door', () => {
    const s = makeFleet({ tenants: { a: {} } });
    expect(s.checkBatch('ghost', 1, 1, T0)).toMatchObject({ code: 'unknown_tenant' });
    s.drain('refuse', T0);
    expect(s.checkBatch('a', 1, 1, T0)).toMatchObject({ code: 'draining' });
    s.drain('hold', T0);
    expect(s.checkBatch('a', 1, 1, T0)).toBeNull();
  });

  it('agrees with the unit door on the same state: the batch fits iff every unit is queued', () => {
    for (const n of [1, 5, 9, 10, 11, 20]) {
      const s = makeFleet({ tenants: { a: { maxQueued: 10, budget: { tokens: 5000, period: 'day' } } } });
      const verdict = s.checkBatch('a', n, 500, T0);
      const results = s.submit(units('a', n, 'standard', 500), T0);
      expect(verdict === null).toBe(results.every((r) => r.accepted));
    }
  });

  it('changes nothing: not the queue, the counters, nor a due budget rollover', () => {
    const s = makeFleet({ tenants: { a: { maxQueued: 1, budget: { tokens: 100, period: 'hour' } } } });
    s.submit(units('a', 1, 'standard', 100), T0);
    const [a] = s.admit(T0);
    s.release([{ runId: a!.runId, attempt: a!.attempt, usedTokens: 100, outcome: 'completed' }], T0);
    s.submit(units('a', 1, 'standard', 1, 10), T0); // the queue is full again
    const before = JSON.stringify(s.snapshot());
    expect(s.checkBatch('a', 3, 1, T0)).toMatchObject({ code: 'queue_full' });
    expect(JSON.stringify(s.snapshot())).toBe(before);
    s.upsertTenant(
      'a',
      { weight: 1, maxQueued: 5, maxInFlight: 50, budget: { tokens: 101, period: 'hour' } },
      T0,
    );
    const after = JSON.stringify(s.snapshot());
    expect(s.checkBatch('a', 1, 100, T0)).toMatchObject({ code: 'budget_exhausted' });
    // Two hours later the period rolled: the check sees the fresh budget without rolling it itself.
    expect(s.checkBatch('a', 1, 100, T0 + 2 * 3600_000)).toBeNull();
    expect(JSON.stringify(s.snapshot())).toBe(after);
  });
});

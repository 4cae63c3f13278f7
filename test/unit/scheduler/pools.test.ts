import { describe, expect, it } from 'vitest';
import { DEFAULT_GOVERNOR, FleetScheduler } from '../../../src/scheduler';
import type { ModelObservation, UnitSubmission } from '../../../src/scheduler';
import { MAX_POOLS } from '../../../src/scheduler/pools';
import { isWellFormedUnit } from '../../../src/workflows/scheduler-validators';
import { T0, makeFleet, units } from './helpers';

const pooled = (list: UnitSubmission[], pool: string): UnitSubmission[] => list.map((u) => ({ ...u, pool }));
const throttled = (pool: string | undefined, retryMs: number): ModelObservation => ({
  at: T0,
  calls: 10,
  throttled: 10,
  maxRetryAfterMs: retryMs,
  retryUntil: T0 + retryMs,
  tokens: 0,
  ...(pool === undefined ? {} : { pool }),
});
const fleet = () =>
  makeFleet({
    settings: { concurrency: 40 },
    governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000 },
    tenants: { a: { maxInFlight: 100 }, b: { maxInFlight: 100 } },
  });

describe('model pools: a governor per pool', () => {
  it('a storm on one pool does not slow the other: its units wait, the other pool admits as before', () => {
    const s = fleet();
    s.submit(pooled(units('a', 10), 'gpt'), T0);
    s.submit(pooled(units('b', 10), 'claude'), T0);
    s.observe([throttled('gpt', 30_000)], T0);
    const admitted = s.admit(T0);
    expect(admitted.map((x) => x.tenant)).toEqual(Array(10).fill('b'));
    const st = s.status(T0);
    expect(st.pools?.gpt?.pausedUntil).toBe(new Date(T0 + 30_000).toISOString());
    expect(st.pools?.claude?.pausedUntil).toBeNull();
    expect(st.pools?.claude?.inFlight).toBe(10);
    // The default pool saw nothing.
    expect(st.governor.pausedUntil).toBeNull();
    // Nothing else may go before the storm's pause ends: the scheduler wakes then, and admits gpt's units.
    expect(s.nextWakeAt(T0 + 1)).toBe(T0 + 30_000);
    expect(s.admit(T0 + 30_000).map((x) => x.tenant)).toEqual(Array(10).fill('a'));
  });

  it("cuts only the throttled pool's slots", () => {
    const s = fleet();
    s.submit(pooled(units('a', 30), 'gpt'), T0);
    s.submit(pooled(units('b', 30), 'claude'), T0);
    s.admit(T0);
    const before = s.status(T0).pools!;
    s.observe([throttled('gpt', 0)], T0 + 1000);
    const after = s.status(T0 + 1000).pools!;
    expect(after.gpt!.concurrencyLimit).toBeLessThan(before.gpt!.concurrencyLimit);
    expect(after.claude!.concurrencyLimit).toBe(before.claude!.concurrencyLimit);
    expect(after.gpt!.decreases).toBeGreaterThan(0);
    expect(after.claude!.decreases).toBe(0);
  });

  it('keeps pools, queued units and leases across a snapshot, and decides the same after it', () => {
    const s = fleet();
    s.submit(pooled(units('a', 6), 'gpt'), T0);
    s.submit(pooled(units('b', 6), 'claude'), T0);
    s.submit(units('b', 3, 'standard', 100, 100), T0);
    s.admit(T0, 4);
    s.observe([throttled('gpt', 20_000)], T0);
    const copy = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(copy.status(T0)).toEqual(s.status(T0));
    expect(copy.admit(T0 + 1000)).toEqual(s.admit(T0 + 1000));
    expect(copy.admit(T0 + 25_000)).toEqual(s.admit(T0 + 25_000));
    expect(copy.snapshot()).toEqual(s.snapshot());
  });

  it('counts a unit or an observation naming no pool, a malformed one or one past the bound in the default pool', () => {
    const s = fleet();
    s.submit(units('a', 2), T0);
    s.observe([throttled(undefined, 10_000)], T0);
    expect(s.status(T0).pools).toBeUndefined();
    expect(s.status(T0).governor.pausedUntil).toBe(new Date(T0 + 10_000).toISOString());
    for (let i = 0; i < MAX_POOLS + 3; i++) s.submit(pooled(units('b', 1, 'standard', 100, i), `p${i}`), T0);
    expect(Object.keys(s.status(T0).pools!)).toHaveLength(MAX_POOLS);
    // The default pool is paused: the units past the bound wait with it, the named pools' go.
    const admitted = s.admit(T0);
    expect(admitted).toHaveLength(MAX_POOLS);
    expect(admitted.every((x) => x.tenant === 'b')).toBe(true);
    s.observe([{ ...throttled('not a pool!', 0), throttled: 0 }], T0);
    expect(Object.keys(s.status(T0).pools!)).toHaveLength(MAX_POOLS);
  });

  it('a lease adopted from a renewal counts in the pool the renewal names', () => {
    const s = fleet();
    // A chain that lost its leases (scheduler reset): running runs' renewals bring them back.
    s.beginRecovery(T0);
    s.renew(
      [
        {
          runId: 'run-a-00000000000000000001',
          attempt: 0,
          usedTokens: 5,
          tenant: 'a',
          cost: 100,
          pool: 'gpt',
        },
        { runId: 'run-b-00000000000000000001', attempt: 0, usedTokens: 5, tenant: 'b', cost: 100 },
      ],
      T0,
    );
    expect(s.status(T0).pools?.gpt?.inFlight).toBe(1);
    const copy = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(copy.status(T0).pools?.gpt?.inFlight).toBe(1);
  });

  it('the submit validator refuses a malformed pool name', () => {
    const u = units('a', 1)[0]!;
    expect(isWellFormedUnit({ ...u, runId: 'run-a-00000000000000000001', pool: 'gpt-4o' })).toBe(true);
    expect(isWellFormedUnit({ ...u, runId: 'run-a-00000000000000000001', pool: 'no spaces' })).toBe(false);
    expect(isWellFormedUnit({ ...u, runId: 'run-a-00000000000000000001', pool: 7 })).toBe(false);
  });
});

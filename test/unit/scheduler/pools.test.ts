import { describe, expect, it } from 'vitest';
import { DEFAULT_GOVERNOR, FleetScheduler } from '../../../src/scheduler';
import type { ModelObservation, UnitSubmission } from '../../../src/scheduler';
import { MAX_POOLS } from '../../../src/scheduler/pools';
import { PASS_OVER_BOUND_MS, POOL_LOOKAHEAD } from '../../../src/scheduler/admission';
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

  it("a tenant's units of another pool behind a head whose pool is paused are admitted, each pool in order", () => {
    const s = fleet();
    // One tenant, one lane: gpt, gpt, claude, gpt, claude, claude, interleaved in arrival order.
    const order = ['gpt', 'gpt', 'claude', 'gpt', 'claude', 'claude'];
    s.submit(
      units('a', order.length).map((u, i) => ({ ...u, pool: order[i]! })),
      T0,
    );
    s.observe([throttled('gpt', 30_000)], T0);
    const during = s.admit(T0);
    expect(during.map((a) => a.runId)).toEqual(['a-standard-2', 'a-standard-4', 'a-standard-5']);
    // The paused pool's units keep their order and go first once it reopens.
    const after = s.admit(T0 + 31_000);
    expect(after.map((a) => a.runId)).toEqual(['a-standard-0', 'a-standard-1', 'a-standard-3']);
  });

  it('explains a unit waiting on its paused pool by naming the pool; the other pool is not blamed', () => {
    const s = fleet();
    s.submit(pooled(units('a', 1), 'gpt'), T0);
    s.observe([throttled('gpt', 30_000)], T0);
    s.admit(T0);
    expect(s.explain('a-standard-0', T0)).toMatchObject({
      code: 'governor',
      message: expect.stringContaining('The model provider of model pool "gpt" asked to back off'),
    });
    s.submit(pooled(units('b', 1), 'claude'), T0);
    expect(s.explain('b-standard-0', T0)?.message ?? '').not.toContain('back off');
  });

  it('a unit of another pool that does not fit now is not jumped by a smaller one of its pool', () => {
    const s = makeFleet({
      settings: { concurrency: 40 },
      governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000, initialTokensPerMinute: 20_000 },
      tenants: { a: { maxInFlight: 100 }, b: { maxInFlight: 100 } },
    });
    s.submit(pooled(units('b', 1, 'standard', 500), 'claude'), T0);
    expect(s.admit(T0)).toHaveLength(1);
    s.submit(pooled(units('a', 1), 'gpt'), T0);
    s.submit(pooled(units('a', 1, 'standard', 19_800, 1), 'claude'), T0);
    s.submit(pooled(units('a', 1, 'standard', 100, 2), 'claude'), T0);
    s.observe([throttled('gpt', 30_000)], T0);
    expect(s.admit(T0)).toEqual([]);
  });

  it('holds each pool for its own unit passed over too long, across a snapshot; other pools go on', () => {
    const s = makeFleet({
      settings: { concurrency: 40 },
      governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000, initialTokensPerMinute: 20_000 },
      tenants: { a: { maxInFlight: 100 }, b: { maxInFlight: 100 }, c: { maxInFlight: 100 }, d: {} },
    });
    s.submit(pooled(units('b', 1, 'standard', 15_000), 'gpt'), T0);
    s.submit(pooled(units('b', 1, 'standard', 15_000, 1), 'claude'), T0);
    expect(s.admit(T0)).toHaveLength(2);
    s.submit(pooled(units('a', 1, 'standard', 19_000), 'gpt'), T0);
    s.submit(pooled(units('c', 1, 'standard', 19_000), 'claude'), T0);
    expect(s.admit(T0)).toEqual([]);
    // Past the bound and a full bucket later: only the holds keep the small units out.
    const later = T0 + Math.max(PASS_OVER_BOUND_MS + 1000, 90_000);
    s.submit(pooled(units('d', 1, 'standard', 10), 'gpt'), later);
    s.submit(pooled(units('d', 1, 'standard', 10, 1), 'claude'), later);
    s.submit(units('d', 1, 'standard', 10, 2), later);
    const copy = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    for (const x of [s, copy]) {
      expect(x.explain('d-standard-0', later)?.message).toContain(
        'Admission of model pool "gpt" is held for a-standard-0',
      );
      expect(x.explain('d-standard-1', later)?.message).toContain(
        'Admission of model pool "claude" is held for c-standard-0',
      );
    }
    // The default pool is held for nobody: its unit goes; the held pools' small units wait.
    expect(copy.admit(later).map((a) => a.runId)).toEqual(['d-standard-2']);
    expect(s.admit(later).map((a) => a.runId)).toEqual(['d-standard-2']);
  });

  it("a pool lease's settlement and top-ups meter its own pool's bucket", () => {
    const s = makeFleet({
      settings: { concurrency: 40 },
      governor: { ...DEFAULT_GOVERNOR, initialTokensPerMinute: 20_000 },
      tenants: { a: { maxInFlight: 100 }, b: { maxInFlight: 100 } },
    });
    s.submit(pooled(units('a', 2, 'standard', 19_000), 'gpt'), T0);
    const [first] = s.admit(T0);
    expect(first?.runId).toBe('a-standard-0');
    // Released unused: the gpt bucket's debt is settled, so the second unit fits once the bucket has
    // refilled for a burst (5 s), not after the whole debt (about a minute).
    s.release([{ runId: 'a-standard-0', attempt: 0, usedTokens: 0, outcome: 'failed' }], T0 + 10);
    expect(s.admit(T0 + 6000).map((a) => a.runId)).toEqual(['a-standard-1']);
    // A top-up of the gpt lease is metered in the gpt bucket: the default pool's unit still goes.
    expect(s.topUp('a-standard-1', 0, 19_000, T0 + 6000)).toMatchObject({ granted: true });
    s.submit(pooled(units('a', 1, 'standard', 19_000, 2), 'gpt'), T0 + 6000);
    s.submit(units('b', 1, 'standard', 19_000), T0 + 6000);
    expect(s.admit(T0 + 6000).map((a) => a.runId)).toEqual(['b-standard-0']);
  });

  it("the door's wait bound counts the unit's own pool's pause, not another pool's", () => {
    const s = makeFleet({
      settings: { concurrency: 40, maxWaitSeconds: { standard: 10 } },
      governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000 },
      tenants: { a: { maxInFlight: 100 } },
    });
    s.observe([throttled(undefined, 30_000)], T0);
    // The default pool is paused for 30 s: its unit would wait past the bound.
    expect(s.submit(units('a', 1), T0)[0]).toMatchObject({ accepted: false, code: 'wait_too_long' });
    // A pool not governed yet, and then a governed one, are not held by it.
    expect(s.submit(pooled(units('a', 1, 'standard', 100, 1), 'gpt'), T0)[0]).toMatchObject({
      accepted: true,
    });
    expect(s.submit(pooled(units('a', 1, 'standard', 100, 2), 'gpt'), T0)[0]).toMatchObject({
      accepted: true,
    });
    s.observe([throttled('gpt', 30_000)], T0);
    expect(s.submit(pooled(units('a', 1, 'standard', 100, 3), 'gpt'), T0)[0]).toMatchObject({
      accepted: false,
      code: 'wait_too_long',
    });
  });

  it("caps a pool at its own quota share of the provider's stated limit", () => {
    const s = makeFleet({
      settings: { concurrency: 40 },
      governor: { ...DEFAULT_GOVERNOR, quotaShare: 0.9, poolQuotaShares: { gpt: 0.5 } },
      tenants: { a: { maxInFlight: 100 } },
    });
    s.submit(pooled(units('a', 1), 'gpt'), T0);
    s.submit(pooled(units('a', 1, 'standard', 100, 1), 'claude'), T0);
    const stated = (pool: string | undefined): ModelObservation => ({
      ...throttled(pool, 0),
      throttled: 0,
      maxRetryAfterMs: 0,
      limitTokens: 60_000,
      remainingTokens: 60_000,
    });
    s.observe([stated('gpt'), stated('claude'), stated(undefined)], T0);
    const st = s.status(T0);
    expect(st.pools?.gpt?.tokensPerMinute).toBe(30_000);
    expect(st.pools?.claude?.tokensPerMinute).toBe(54_000);
    expect(st.governor.tokensPerMinute).toBe(54_000);
  });

  it("looks at most POOL_LOOKAHEAD units behind the head, and never past the tenant's budget", () => {
    const s = makeFleet({
      settings: { concurrency: 40 },
      governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000 },
      tenants: { a: { maxInFlight: 100 }, b: { maxInFlight: 100, budget: { tokens: 250, period: 'day' } } },
    });
    s.submit(pooled(units('a', POOL_LOOKAHEAD + 1), 'gpt'), T0);
    s.submit(pooled(units('a', 1, 'standard', 100, POOL_LOOKAHEAD + 1), 'claude'), T0);
    s.submit(pooled(units('b', 1), 'gpt'), T0);
    s.submit(pooled(units('b', 1, 'standard', 300, 1), 'claude'), T0);
    s.observe([throttled('gpt', 30_000)], T0);
    expect(s.admit(T0)).toEqual([]);
    // One place closer: within the bound.
    s.cancel(['a-standard-0'], T0);
    expect(s.admit(T0).map((a) => a.runId)).toEqual([`a-standard-${POOL_LOOKAHEAD + 1}`]);
  });

  it('the submit validator refuses a malformed pool name', () => {
    const u = units('a', 1)[0]!;
    expect(isWellFormedUnit({ ...u, runId: 'run-a-00000000000000000001', pool: 'gpt-4o' })).toBe(true);
    expect(isWellFormedUnit({ ...u, runId: 'run-a-00000000000000000001', pool: 'no spaces' })).toBe(false);
    expect(isWellFormedUnit({ ...u, runId: 'run-a-00000000000000000001', pool: 7 })).toBe(false);
  });
});

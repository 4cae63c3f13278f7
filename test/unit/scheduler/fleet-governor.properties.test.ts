import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allowance,
  demandCurve,
  effectiveFloor,
  renewGrants,
  withinQuota,
} from '../../../src/scheduler/fleet-governor';
import type { FleetGovernorConfig, Grant } from '../../../src/scheduler/fleet-governor';
import { shardOf } from '../../../src/scheduler/shard-map';

const T0 = Date.UTC(2025, 0, 1);
const SHARDS = ['s0', 's1', 's2', 's3', 's4', 's5'];

const config = (over: Partial<FleetGovernorConfig> = {}): FleetGovernorConfig => ({
  quota: { slots: 1000, requestsPerMinute: 6000, tokensPerMinute: 80_000_000 },
  floor: { slots: 10, requestsPerMinute: 60, tokensPerMinute: 800_000 },
  shards: SHARDS,
  leaseMs: 3000,
  ...over,
});

const quotaArb = fc.record({
  slots: fc.integer({ min: 0, max: 100_000 }),
  requestsPerMinute: fc.integer({ min: 0, max: 1_000_000 }),
  tokensPerMinute: fc.integer({ min: 0, max: 1_000_000_000 }),
});

/** Rounds of renewals: each shard renews with some weight, or misses the round; time moves on. */
const roundsArb = fc.array(
  fc.record({
    ms: fc.integer({ min: 0, max: 5000 }),
    weights: fc.array(
      fc.option(fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.nat(200_000)), { nil: undefined }),
      {
        minLength: SHARDS.length,
        maxLength: SHARDS.length,
      },
    ),
  }),
  { maxLength: 30 },
);

/** A whole-unit share of `exact`: rounded down or, by largest remainder, up. */
const near = (value: number, exact: number) => {
  expect(value).toBeGreaterThanOrEqual(Math.floor(exact));
  expect(value).toBeLessThanOrEqual(Math.ceil(exact));
};

describe('fleet governor', () => {
  it('never lets grants plus floors pass the quota, whoever renews or lapses', () => {
    fc.assert(
      fc.property(
        quotaArb,
        quotaArb,
        fc.integer({ min: 1, max: 10_000 }),
        roundsArb,
        (quota, floor, leaseMs, rounds) => {
          const cfg = config({ quota, floor, leaseMs });
          let grants = new Map<string, Grant>();
          let now = T0;
          for (const r of rounds) {
            now += r.ms;
            expect(withinQuota(cfg, grants, now)).toBe(true);
            const demands = SHARDS.flatMap((shard, i) => {
              const w = r.weights[i];
              return w === undefined ? [] : [{ shard, weight: w[0], slotsInUse: w[1] }];
            });
            grants = renewGrants(cfg, grants, demands, now);
            expect(withinQuota(cfg, grants, now)).toBe(true);
            for (const g of grants.values()) expect(g.expiresAt).toBeLessThanOrEqual(now + leaseMs);
          }
          // Past every lease, each shard may use its floor and nothing more.
          for (const shard of SHARDS)
            expect(allowance(cfg, grants.get(shard), now + leaseMs)).toEqual(effectiveFloor(cfg));
        },
      ),
    );
  });

  it('shares in proportion to backlogged weight, floors counted in, when every shard renews', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: SHARDS.length, maxLength: SHARDS.length }),
        fc.integer({ min: 0, max: 150 }),
        (weights, floorSlots) => {
          const cfg = config({
            floor: { slots: floorSlots, requestsPerMinute: 60, tokensPerMinute: 800_000 },
          });
          const demands = SHARDS.map((shard, i) => ({ shard, weight: weights[i]! }));
          const grants = renewGrants(cfg, new Map(), demands, T0);
          const floor = effectiveFloor(cfg);
          for (const d of ['slots', 'requestsPerMinute', 'tokensPerMinute'] as const) {
            const mine = SHARDS.map((s) => allowance(cfg, grants.get(s), T0)[d]);
            const above = SHARDS.map((_, i) => i).filter((i) => weights[i]! > 0 && mine[i]! > floor[d]);
            // Shards above their floor share one rate per unit of weight, up to rounding down.
            const sumOf = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
            const rate = above.length
              ? sumOf(above.map((i) => mine[i]!)) / sumOf(above.map((i) => weights[i]!))
              : 0;
            for (const i of above) expect(Math.abs(mine[i]! - rate * weights[i]!)).toBeLessThan(1 + 1e-6);
            // A backlogged shard at its floor would not have got more at that rate.
            for (let i = 0; i < SHARDS.length; i++) {
              if (weights[i]! > 0 && mine[i] === floor[d])
                expect(floor[d] + 1).toBeGreaterThan(rate * weights[i]!);
            }
            // Nothing backlogged: only floors; otherwise all but rounding is handed out.
            const used = mine.reduce((x, y) => x + y, 0);
            if (weights.every((w) => w === 0)) expect(used).toBe(SHARDS.length * floor[d]);
            else expect(cfg.quota[d] - used).toBeLessThan(SHARDS.length);
          }
        },
      ),
    );
  });

  it('keeps a silent shard its grant until the lease ends, then its floor and its slots until it renews', () => {
    const cfg = config();
    const all = SHARDS.map((shard) => ({ shard, weight: 1 }));
    let grants = renewGrants(cfg, new Map(), all, T0);
    const slots = grants.get('s0')!.slots;
    const tpm = grants.get('s0')!.tokensPerMinute;
    near(slots, (1000 - 60) / 6);
    // s0 goes silent; the others report all the backlog, but s0's grant still counts.
    grants = renewGrants(cfg, grants, all.slice(1), T0 + 1000);
    expect(allowance(cfg, grants.get('s0'), T0 + 1000).slots).toBe(10 + slots);
    near(grants.get('s1')!.slots, (1000 - 60 - slots) / 5);
    // Past its lease s0 may use only its floor; its rates go to the others, its slots wait for it.
    expect(allowance(cfg, grants.get('s0'), T0 + 3000)).toEqual(effectiveFloor(cfg));
    grants = renewGrants(cfg, grants, all.slice(1), T0 + 3000);
    near(grants.get('s1')!.slots, (1000 - 60 - slots) / 5);
    expect(grants.get('s1')!.tokensPerMinute).toBe(Math.floor((80_000_000 - 6 * 800_000) / 5));
    expect(withinQuota(cfg, grants, T0 + 3000)).toBe(true);
    // s0 renews holding only its floor's slots: the slots are shared again.
    grants = renewGrants(
      cfg,
      grants,
      all.slice(0, 1).map((d) => ({ ...d, slotsInUse: 10 })),
      T0 + 4000,
    );
    const others = SHARDS.slice(1).reduce((a, s) => a + grants.get(s)!.slots, 0);
    expect(grants.get('s0')!.slots).toBe(940 - others);
    expect(grants.get('s0')!.tokensPerMinute).toBeLessThan(tpm);
  });

  it('counts slots a renewing shard still holds above its grant until they are released', () => {
    const cfg = config();
    let grants = renewGrants(cfg, new Map(), [{ shard: 's0', weight: 1 }], T0);
    expect(grants.get('s0')!.slots).toBe(940);
    // Five more shards become backlogged while s0 still holds 500 leases: its grant drops to the
    // common share of its target at once, but its 490 slots above the floor stay counted.
    const demands = SHARDS.map((shard) => ({ shard, weight: 1, slotsInUse: shard === 's0' ? 500 : 0 }));
    grants = renewGrants(cfg, grants, demands, T0 + 1000);
    const target = Math.floor(1000 / 6) - 10;
    const s1 = grants.get('s1')!.slots;
    expect(grants.get('s0')!).toMatchObject({ slots: s1, slotsHeld: 490 });
    expect(490 + 5 * s1).toBeLessThanOrEqual(940);
    expect(490 + 5 * (s1 + 1)).toBeGreaterThan(940 - 6);
    expect(s1).toBeLessThan(target);
    expect(withinQuota(cfg, grants, T0 + 1000)).toBe(true);
    // Its leases end; the next round gives every shard its target.
    grants = renewGrants(
      cfg,
      grants,
      SHARDS.map((shard) => ({ shard, weight: 1, slotsInUse: 0 })),
      T0 + 2000,
    );
    for (const s of SHARDS) {
      near(grants.get(s)!.slots, 1000 / 6 - 10);
      expect(grants.get(s)!.slotsHeld).toBe(grants.get(s)!.slots);
    }
    expect(SHARDS.reduce((a, s) => a + grants.get(s)!.slots, 0)).toBe(940);
  });

  it('shares by demand curves: a tenant counts for the slots it can use, not its whole weight', () => {
    const cfg = config({ shards: ['a', 'b'], floor: { slots: 0, requestsPerMinute: 0, tokensPerMinute: 0 } });
    // a: one whale of weight 4 that could use every slot; b: 300 tenants of weight 1 using one slot each.
    const a = demandCurve([{ weight: 4, slots: 1000 }]);
    const b = demandCurve(Array.from({ length: 300 }, () => ({ weight: 1, slots: 1 })));
    const byCurve = renewGrants(
      cfg,
      new Map(),
      [
        { shard: 'a', weight: 4, curve: a },
        { shard: 'b', weight: 300, curve: b },
      ],
      T0,
    );
    expect(byCurve.get('b')!.slots).toBeGreaterThanOrEqual(299);
    expect(byCurve.get('b')!.slots).toBeLessThanOrEqual(310);
    expect(byCurve.get('a')!.slots + byCurve.get('b')!.slots).toBeGreaterThan(995);
    // By weight alone the whale would get 4/304 of the slots.
    const byWeight = renewGrants(
      cfg,
      new Map(),
      [
        { shard: 'a', weight: 4 },
        { shard: 'b', weight: 300 },
      ],
      T0,
    );
    expect(byWeight.get('a')!.slots).toBe(13);
  });

  it("gives a tenant capped below the fair rate its cap, the uncapped absorbing idle shards' floors", () => {
    const cfg = config();
    // s0: one tenant capped at 50 slots; s1: a whale that could use every slot; s2..s5 idle.
    const demands = SHARDS.map((shard, i) => ({
      shard,
      weight: i < 2 ? 1 : 0,
      curve: demandCurve(i === 0 ? [{ weight: 1, slots: 50 }] : i === 1 ? [{ weight: 1, slots: 1000 }] : []),
    }));
    const grants = renewGrants(cfg, new Map(), demands, T0);
    const slots = (s: string) => allowance(cfg, grants.get(s), T0).slots;
    expect(slots('s0')).toBe(50);
    expect(slots('s1')).toBe(1000 - 50 - 4 * 10);
    expect(withinQuota(cfg, grants, T0)).toBe(true);
  });

  it("splits each shard's slots by lane as one core would split the fleet's", () => {
    const cfg = config({
      shards: ['a', 'b'],
      floor: { slots: 0, requestsPerMinute: 0, tokensPerMinute: 0 },
      laneFloors: { standard: 0.1, batch: 0.05 },
    });
    const whale = [{ weight: 1, slots: 1000 }];
    // a: a tenant flooding interactive and one flooding standard; b: one flooding standard.
    const grants = renewGrants(
      cfg,
      new Map(),
      [
        { shard: 'a', weight: 2, laneCurves: [demandCurve(whale), demandCurve(whale), demandCurve([])] },
        { shard: 'b', weight: 1, laneCurves: [demandCurve([]), demandCurve(whale), demandCurve([])] },
      ],
      T0,
    );
    const a = grants.get('a')!;
    const b = grants.get('b')!;
    // Interactive takes all but standard's floor (900); the two standard tenants share 100.
    expect(a.slots).toBeGreaterThanOrEqual(949);
    expect(b.slots).toBeGreaterThanOrEqual(49);
    expect(a.slots + b.slots).toBeLessThanOrEqual(1000);
    expect(a.slots * a.lanes![1]!).toBeCloseTo(b.slots * b.lanes![1]!, -1);
    expect(b.lanes).toEqual([0, 1, 0]);
  });

  it('keeps grants plus floors within the quota and lane splits whole, with lane curves', () => {
    const tenantsArb = fc.array(fc.record({ weight: fc.integer({ min: 1, max: 8 }), slots: fc.nat(500) }), {
      maxLength: 5,
    });
    fc.assert(
      fc.property(
        quotaArb,
        quotaArb,
        fc.array(
          fc.array(fc.option(fc.tuple(tenantsArb, tenantsArb, tenantsArb, fc.nat(2000))), {
            minLength: SHARDS.length,
            maxLength: SHARDS.length,
          }),
          { maxLength: 8 },
        ),
        (quota, floor, rounds) => {
          const cfg = config({ quota, floor, laneFloors: { standard: 0.1, batch: 0.05 } });
          let grants = new Map<string, Grant>();
          let now = T0;
          for (const r of rounds) {
            now += 1000;
            const demands = SHARDS.flatMap((shard, i) => {
              const d = r[i];
              if (!d) return [];
              return [
                {
                  shard,
                  weight: 1,
                  slotsInUse: d[3],
                  perSlot: { tokensPerMinute: d[3] * 1000 },
                  laneCurves: d
                    .slice(0, 3)
                    .map((ts) => demandCurve(ts as { weight: number; slots: number }[])),
                },
              ];
            });
            grants = renewGrants(cfg, grants, demands, now);
            expect(withinQuota(cfg, grants, now)).toBe(true);
            for (const g of grants.values()) {
              if (!g.lanes) continue;
              expect(g.lanes.every((x) => x >= 0)).toBe(true);
              expect(g.lanes.reduce((a, x) => a + x, 0)).toBeCloseTo(1, 9);
            }
          }
        },
      ),
    );
  });

  it("shares tokens by slot weight times what a shard's slots use, so costly units get their tokens", () => {
    const cfg = config({
      shards: ['a', 'b', 'c'],
      floor: { slots: 0, requestsPerMinute: 0, tokensPerMinute: 0 },
    });
    const grants = renewGrants(
      cfg,
      new Map(),
      [
        { shard: 'a', weight: 1, perSlot: { tokensPerMinute: 300_000 } },
        { shard: 'b', weight: 1, perSlot: { tokensPerMinute: 100_000 } },
        // c reports nothing: it counts at the mean of the others (200,000).
        { shard: 'c', weight: 1 },
      ],
      T0,
    );
    near(grants.get('a')!.slots, 1000 / 3);
    near(grants.get('b')!.slots, 1000 / 3);
    expect(grants.get('a')!.tokensPerMinute).toBe(40_000_000);
    near(grants.get('b')!.tokensPerMinute, 80_000_000 / 6);
    near(grants.get('c')!.tokensPerMinute, 80_000_000 / 3);
  });

  it('lowers floors that would not fit, and ignores shards outside the map', () => {
    const cfg = config({ floor: { slots: 500, requestsPerMinute: 0, tokensPerMinute: 0 } });
    expect(effectiveFloor(cfg).slots).toBe(166);
    const grants = renewGrants(cfg, new Map(), [{ shard: 'stranger', weight: 5 }], T0);
    expect(grants.size).toBe(0);
  });
});

describe('shard map', () => {
  const map = { version: 1, shards: ['a', 'b', 'c', 'd'], overrides: { whale: 'c', lost: 'zz' } };

  it('places a tenant by its override, else by a stable hash', () => {
    expect(shardOf(map, 'whale')).toBe('c');
    expect(map.shards).toContain(shardOf(map, 'lost'));
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const s = shardOf(map, `tenant-${i}`);
      expect(shardOf(map, `tenant-${i}`)).toBe(s);
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    for (const s of map.shards) expect(counts.get(s)).toBeGreaterThan(800);
  });
});

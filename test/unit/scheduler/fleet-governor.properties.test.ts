import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allowance,
  effectiveFloor,
  fleetTotal,
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
    weights: fc.array(fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }), {
      minLength: SHARDS.length,
      maxLength: SHARDS.length,
    }),
  }),
  { maxLength: 30 },
);

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
              return w === undefined ? [] : [{ shard, weight: w }];
            });
            grants = renewGrants(cfg, grants, demands, now);
            expect(withinQuota(cfg, grants, now)).toBe(true);
            for (const g of grants.values()) expect(g.expiresAt).toBeLessThanOrEqual(now + leaseMs);
          }
          // Past every lease, each shard holds its floor and nothing more.
          expect(fleetTotal(cfg, grants, now + leaseMs)).toEqual(
            Object.fromEntries(Object.entries(effectiveFloor(cfg)).map(([k, v]) => [k, v * SHARDS.length])),
          );
        },
      ),
    );
  });

  it('grants in proportion to backlogged weight, within one unit, when every shard renews', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: SHARDS.length, maxLength: SHARDS.length }),
        (weights) => {
          const cfg = config();
          const demands = SHARDS.map((shard, i) => ({ shard, weight: weights[i]! }));
          const grants = renewGrants(cfg, new Map(), demands, T0);
          const total = weights.reduce((a, b) => a + b, 0);
          const floor = effectiveFloor(cfg);
          for (const d of ['slots', 'requestsPerMinute', 'tokensPerMinute'] as const) {
            const spare = cfg.quota[d] - SHARDS.length * floor[d];
            const granted = SHARDS.reduce((a, s) => a + grants.get(s)![d], 0);
            SHARDS.forEach((s, i) => {
              const exact = total === 0 ? 0 : (spare * weights[i]!) / total;
              expect(grants.get(s)![d]).toBeLessThanOrEqual(exact);
              expect(grants.get(s)![d]).toBeGreaterThan(exact - 1);
            });
            // Nothing backlogged: the spare stays unused; otherwise all but rounding is granted.
            expect(spare - granted).toBeLessThan(total === 0 ? spare + 1 : SHARDS.length);
          }
        },
      ),
    );
  });

  it('keeps a silent shard its grant until the lease ends, then its floor; the rest waits for it', () => {
    const cfg = config();
    const all = SHARDS.map((shard) => ({ shard, weight: 1 }));
    let grants = renewGrants(cfg, new Map(), all, T0);
    const share = grants.get('s0')!.slots;
    expect(share).toBe(Math.floor((1000 - 60) / 6));
    // s0 goes silent; the others now report all the backlog, but s0's grant still counts.
    grants = renewGrants(cfg, grants, all.slice(1), T0 + 1000);
    expect(allowance(cfg, grants.get('s0'), T0 + 1000).slots).toBe(10 + share);
    expect(grants.get('s1')!.slots).toBe(Math.floor((1000 - 60 - share) / 5));
    // Past s0's lease it holds only its floor and the next round hands its share to the others.
    expect(allowance(cfg, grants.get('s0'), T0 + 3000).slots).toBe(10);
    grants = renewGrants(cfg, grants, all.slice(1), T0 + 3000);
    expect(grants.has('s0')).toBe(false);
    expect(grants.get('s1')!.slots).toBe(Math.floor((1000 - 60) / 5));
    expect(withinQuota(cfg, grants, T0 + 3000)).toBe(true);
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

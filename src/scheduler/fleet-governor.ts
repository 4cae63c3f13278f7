/**
 * The fleet governor of one model pool across scheduler shards (issue 48; docs/design.md, "Beyond
 * one machine"). Pure: time is passed in. Every shard always holds a floor; what the quota leaves
 * above the floors is granted to shards in proportion to their backlogged weight, on a lease. A
 * grant is counted as held until it is replaced by its shard's renewal or its lease ends, so a shard
 * that stops renewing keeps its grant until expiry and then falls to its floor, and the sum of what
 * shards may use never exceeds the quota, whoever renews or lapses.
 */

import { fairAllowances, laneAllowances } from './fleet-demand';
import type { LaneFloors } from './fleet-demand';

export { DEMAND_GRID, demandCurve } from './fleet-demand';
export type { LaneFloors } from './fleet-demand';

/** One model pool's limits: concurrent slots, requests a minute, tokens a minute. */
export interface PoolQuota {
  slots: number;
  requestsPerMinute: number;
  tokensPerMinute: number;
}

const DIMS = ['slots', 'requestsPerMinute', 'tokensPerMinute'] as const;

export interface FleetGovernorConfig {
  /** The provider's quota for the pool (already reduced to the share the fleet may use). */
  quota: PoolQuota;
  /** What every shard may use with no grant at all (clamped so the shards' floors fit the quota). */
  floor: PoolQuota;
  /** Every shard of the shard map: each holds a floor whether it reports or not. */
  shards: readonly string[];
  /** A grant's lease, ms: a shard that does not renew within it falls to its floor. */
  leaseMs: number;
  /** The cores' lane floors, for splitting the fleet's slots by lane (`laneCurves`); absent: none. */
  laneFloors?: LaneFloors;
}

/** A shard's share above its floor, valid until `expiresAt`. */
export interface Grant extends PoolQuota {
  shard: string;
  expiresAt: number;
  /** Slots counted against the quota: the grant's, or more while leases above it still run. */
  slotsHeld: number;
  /**
   * With lane curves: each lane's share of the shard's allowance (interactive, standard, batch,
   * summing to 1), the fleet's lane split at the shard; the shard sets its core's lane floors from it.
   */
  lanes?: number[];
}

/**
 * A shard's renewal: the summed weight of its tenants with units queued (0: nothing backlogged),
 * and the slots its leases hold now.
 */
export interface ShardDemand {
  shard: string;
  weight: number;
  slotsInUse?: number;
  /** The shard's demand curve (`demandCurve`); when every renewing shard sends one, it replaces `weight`. */
  curve?: readonly number[];
  /**
   * What one of its slots used a minute lately (tokens, requests): a shard's rates are shared by its
   * slot weight times this, so a shard of costly units gets the tokens its slots need. Absent: the
   * mean of the shards that report it.
   */
  perSlot?: Partial<Pick<PoolQuota, 'requestsPerMinute' | 'tokensPerMinute'>>;
  /** A demand curve per lane (interactive, standard, batch); when every renewing shard sends them, they replace `curve`. */
  laneCurves?: readonly (readonly number[])[];
}

const zero = (): PoolQuota => ({ slots: 0, requestsPerMinute: 0, tokensPerMinute: 0 });

/** The floor each shard gets: the configured one, lowered (whole units) until all floors fit the quota. */
export function effectiveFloor(cfg: FleetGovernorConfig): PoolQuota {
  const n = Math.max(1, cfg.shards.length);
  const f = zero();
  for (const d of DIMS) f[d] = Math.max(0, Math.min(Math.floor(cfg.floor[d]), Math.floor(cfg.quota[d] / n)));
  return f;
}

/**
 * What the governor counts against the quota for one shard's grant: all of it while its lease
 * holds; after that its rates are free again, but its slots stay counted until the shard renews,
 * because leases it admitted under the grant are still running and cannot be taken back.
 */
function committed(g: Grant | undefined, now: number): PoolQuota {
  if (!g) return zero();
  if (now < g.expiresAt)
    return { slots: g.slotsHeld, requestsPerMinute: g.requestsPerMinute, tokensPerMinute: g.tokensPerMinute };
  return { ...zero(), slots: g.slotsHeld };
}

/*
 * Allowances out of `pool` in proportion to weight, in whole units (`wholeUnits`), none below `floor`: a shard
 * whose share would be less keeps its floor and the rest is shared among the others
 * (water-filling), so floors count toward a shard's share instead of being added to it.
 */
function share(pool: number, floor: number, weights: readonly number[]): number[] {
  const bound = new Set<number>();
  for (;;) {
    const free = pool - floor * bound.size;
    const weight = weights.reduce((a, w, i) => (bound.has(i) ? a : a + w), 0);
    const before = bound.size;
    weights.forEach((w, i) => {
      if (!bound.has(i) && (weight === 0 || (free * w) / weight < floor)) bound.add(i);
    });
    if (bound.size === before)
      return wholeUnits(weights.map((w, i) => (bound.has(i) ? floor : (free * w) / weight)));
  }
}

/*
 * Rounds shares to whole units by largest remainder: each gets its share rounded down, and the units
 * the rounding left (the shares' sum rounded down, less what was given) go one each to the largest
 * fractions, earlier shards first on ties. So the sum never passes the shares' own and a shard at 2.9
 * gets 3, where rounding every share down would leave up to one unit per shard unused.
 */
function wholeUnits(xs: readonly number[]): number[] {
  const out = xs.map((x) => Math.floor(x));
  let left = Math.floor(xs.reduce((a, x) => a + x, 0) + 1e-9) - out.reduce((a, x) => a + x, 0);
  const byRemainder = xs.map((x, i) => i).sort((i, j) => xs[j]! - out[j]! - (xs[i]! - out[i]!) || i - j);
  for (const i of byRemainder) {
    if (left <= 0) break;
    if (xs[i]! - out[i]! <= 0) continue;
    out[i]!++;
    left--;
  }
  return out;
}

/*
 * Slot grants toward `targets` when shards still run `inUse` slots above their floors: a shard's
 * running leases are not taken back, so it holds max(grant, in use) against `room`, and every
 * grant is the same share λ ≤ 1 of its target, the largest that fits (bisection). In-use slots that
 * do not fit (the quota was lowered) are scaled down: the shard admits nothing until under.
 */
function holdSlots(room: number, targets: readonly number[], inUse: readonly number[]): number[] {
  const used = inUse.reduce((a, u) => a + u, 0);
  const u = used > room ? inUse.map((x) => Math.floor((x * room) / used)) : inUse;
  const fits = (l: number) => targets.reduce((a, t, i) => a + Math.max(Math.floor(l * t), u[i]!), 0) <= room;
  let lo = fits(1) ? 1 : 0;
  let hi = 1;
  for (let k = 0; lo < 1 && k < 40; k++) {
    const mid = (lo + hi) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return targets.map((t) => Math.floor(lo * t));
}

/*
 * A rate's weights: each shard's slot weight times what one of its slots used of the rate a minute,
 * or the mean of those reported; the slot weights alone when no shard reports.
 */
function rateWeights(
  order: readonly ShardDemand[],
  weights: readonly number[],
  d: 'requestsPerMinute' | 'tokensPerMinute',
): number[] {
  const known = order.flatMap((r) => {
    const x = r.perSlot?.[d];
    return x !== undefined && Number.isFinite(x) && x > 0 ? [x] : [];
  });
  if (known.length === 0) return [...weights];
  const mean = known.reduce((a, x) => a + x, 0) / known.length;
  return weights.map((w, i) => {
    const x = order[i]!.perSlot?.[d];
    return w * (x !== undefined && Number.isFinite(x) && x > 0 ? x : mean);
  });
}

/**
 * One renewal round. The shards in `demands` renew: each gets a new grant replacing its old one,
 * so that its floor plus grant is in proportion to its weight, out of what the shards that did not
 * renew leave (their floors, live grants, and the slots of their lapsed ones); a shard never gets
 * less than its floor. A shard whose leases hold more slots than its new grant keeps them counted
 * (`slotsHeld`) until it reports them released, so no slot is granted twice. Grants are whole
 * units that never sum past their pool (largest remainder), so the governor's total (`fleetTotal`)
 * never passes the quota. Returns the new grants by shard; a
 * shard's lapsed grant stays in the map until it renews.
 */
export function renewGrants(
  cfg: FleetGovernorConfig,
  held: ReadonlyMap<string, Grant>,
  demands: readonly ShardDemand[],
  now: number,
): Map<string, Grant> {
  const known = new Set(cfg.shards);
  const renewing = new Map<string, ShardDemand>();
  for (const d of demands) if (known.has(d.shard)) renewing.set(d.shard, d);
  const next = new Map([...held].filter(([s]) => known.has(s) && !renewing.has(s)));
  const floor = effectiveFloor(cfg);
  const order = [...renewing.values()];
  const finite = (x: number) => (Number.isFinite(x) ? Math.max(0, x) : 0);
  const curves = order.flatMap((d) => (d.curve ? [d.curve.map(finite)] : []));
  const keptSlots = [...next.values()].reduce((a, g) => a + committed(g, now).slots, 0);
  const others = (cfg.shards.length - order.length) * floor.slots;
  const slotPool = Math.max(0, Math.floor(cfg.quota.slots) - others - keptSlots);
  const byLane = order.every((d) => d.laneCurves)
    ? laneAllowances(
        slotPool,
        floor.slots,
        order.map((d) => (d.laneCurves ?? []).map((c) => c.map(finite))),
        cfg.laneFloors ?? { standard: 0, batch: 0 },
      )
    : null;
  const weights = byLane
    ? byLane.map((x) =>
        Math.max(
          floor.slots,
          x.reduce((a, y) => a + y, 0),
        ),
      )
    : order.length > 0 && curves.length === order.length
      ? fairAllowances(slotPool, floor.slots, curves)
      : order.map((d) => finite(d.weight));
  const grants = order.map((d, i): Grant => {
    const lanes = byLane?.[i];
    const t = lanes?.reduce((a, y) => a + y, 0) ?? 0;
    return {
      shard: d.shard,
      expiresAt: now + cfg.leaseMs,
      slotsHeld: 0,
      ...zero(),
      ...(lanes && t > 0 ? { lanes: lanes.map((y) => y / t) } : {}),
    };
  });
  for (const d of DIMS) {
    const kept = [...next.values()].reduce((a, g) => a + committed(g, now)[d], 0);
    const pool = Math.max(0, Math.floor(cfg.quota[d]) - (cfg.shards.length - order.length) * floor[d] - kept);
    const targets = share(pool, floor[d], d === 'slots' ? weights : rateWeights(order, weights, d)).map(
      (x) => x - floor[d],
    );
    if (d !== 'slots') {
      targets.forEach((x, i) => (grants[i]![d] = x));
      continue;
    }
    // In use above the floor, never more than the shard was counted for before.
    const inUse = order.map((r) => {
      const n = Number.isFinite(r.slotsInUse) ? Math.floor(r.slotsInUse as number) : 0;
      const before = held.get(r.shard);
      return Math.min(Math.max(0, n - floor.slots), before ? committed(before, now).slots : 0);
    });
    holdSlots(pool - order.length * floor.slots, targets, inUse).forEach((x, i) => {
      grants[i]!.slots = x;
      grants[i]!.slotsHeld = Math.max(x, inUse[i]!);
    });
  }
  for (const g of grants) next.set(g.shard, g);
  return next;
}

/** What a shard may use now: its floor, plus its grant while the grant's lease holds. */
export function allowance(cfg: FleetGovernorConfig, grant: Grant | undefined, now: number): PoolQuota {
  const a = effectiveFloor(cfg);
  if (grant && now < grant.expiresAt) for (const d of DIMS) a[d] += grant[d];
  return a;
}

/**
 * What the governor has committed now (every shard's floor, live grants, lapsed grants' slots),
 * per dimension: never more than the quota. What shards may use (`allowance`) is within it.
 */
export function fleetTotal(
  cfg: FleetGovernorConfig,
  grants: ReadonlyMap<string, Grant>,
  now: number,
): PoolQuota {
  const floor = effectiveFloor(cfg);
  const t = zero();
  for (const shard of cfg.shards) {
    const c = committed(grants.get(shard), now);
    for (const d of DIMS) t[d] += floor[d] + c[d];
  }
  return t;
}

/** Whether the governor's total stays within the quota in every dimension. */
export function withinQuota(
  cfg: FleetGovernorConfig,
  grants: ReadonlyMap<string, Grant>,
  now: number,
): boolean {
  const t = fleetTotal(cfg, grants, now);
  return DIMS.every((d) => t[d] <= cfg.quota[d]);
}

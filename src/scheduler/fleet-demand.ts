/**
 * Demand curves and the fleet's fair rate for the fleet governor (issue 48; docs/design.md, "Beyond
 * one machine"). Pure. A shard describes what its tenants could use at every fair rate; the governor
 * finds the rate at which the fleet's slots are used up, per lane as one core would split them.
 */

/** The fair rates, in slots per unit of tenant weight, at which a shard samples its demand curve. */
export const DEMAND_GRID: readonly number[] = Array.from({ length: 48 }, (_, k) => 1e-3 * 2 ** (k / 2));

/**
 * A shard's demand curve: at each rate c of DEMAND_GRID, the slots its tenants would use if every
 * tenant were served c slots per unit of weight, up to what it can use (its running plus queued
 * units, within its own in-flight cap): Σ min(slots, c × weight). So a tenant backlogged with a
 * unit or two counts for what it can use, not for its whole weight.
 */
export function demandCurve(tenants: Iterable<{ weight: number; slots: number }>): number[] {
  const curve = DEMAND_GRID.map(() => 0);
  for (const t of tenants) DEMAND_GRID.forEach((c, k) => (curve[k]! += Math.min(t.slots, c * t.weight)));
  return curve;
}

/**
 * Weighted max-min across shards: the fleet's fair rate c is where the shards' allowances, each its
 * curve at c but never below `floor`, meet `pool` (interpolated between grid points); returns each
 * shard's allowance there. Floors count inside the sum: a shard whose tenants use less than its
 * floor holds the floor and the others' curves share the rest, so a tenant capped below the fair
 * rate gets its cap and the uncapped absorb the floors. Below the pool (every demand met) the
 * curves' last points.
 */
export function fairAllowances(
  pool: number,
  floor: number,
  curves: readonly (readonly number[])[],
): number[] {
  const at = (c: readonly number[], k: number) => Math.max(floor, c[k] ?? 0);
  const total = (k: number) => curves.reduce((a, c) => a + at(c, k), 0);
  const k = DEMAND_GRID.findIndex((_, i) => total(i) >= pool);
  if (k < 0) return curves.map((c) => at(c, DEMAND_GRID.length - 1));
  if (k === 0) return curves.map((c) => at(c, 0));
  const lo = total(k - 1);
  const a = (pool - lo) / (total(k) - lo);
  return curves.map((c) => at(c, k - 1) + a * (at(c, k) - at(c, k - 1)));
}

/** The cores' lane floors: the share of admissions standard and batch keep while they have work. */
export interface LaneFloors {
  standard: number;
  batch: number;
}

/**
 * The fleet's slots by lane (interactive, standard, batch), as one core splits them: lanes in
 * priority order, each lane below keeping its floor share of `pool` (no more than its demand), and
 * no lane past its demand (the slots its tenants can use, fleet-wide).
 */
export function lanePools(pool: number, demand: readonly number[], floors: LaneFloors): number[] {
  const f = [0, floors.standard, floors.batch];
  const reserve = demand.map((d, l) => Math.min(d, (f[l] ?? 0) * pool));
  let left = pool;
  return demand.map((d, l) => {
    const below = reserve.slice(l + 1).reduce((a, r) => a + r, 0);
    const x = Math.max(0, Math.min(d, left - below));
    left -= x;
    return x;
  });
}

const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);

/**
 * Each shard's slots by lane when every shard sends a curve per lane (`curves[shard][lane]`): the
 * fleet's lane pools as one core would split `pool` (`lanePools`), then each lane's pool shared
 * across shards at that lane's fair rate (`fairAllowances`), so a lane's tenants are served at one
 * rate per unit of weight whichever shard holds them. Shards whose lanes sum below `floor` still
 * hold the floor: their shortfall is taken off the pool before the lanes are split.
 */
export function laneAllowances(
  pool: number,
  floor: number,
  curves: readonly (readonly (readonly number[])[])[],
  floors: LaneFloors,
): number[][] {
  const last = DEMAND_GRID.length - 1;
  const demand = [0, 1, 2].map((l) => sum(curves.map((c) => c[l]?.[last] ?? 0)));
  let lanes: number[][] = curves.map(() => [0, 0, 0]);
  let room = pool;
  for (let round = 0; round < 3; round++) {
    const pools = lanePools(room, demand, floors);
    const byLane = pools.map((p, l) =>
      fairAllowances(
        p,
        0,
        curves.map((c) => c[l] ?? []),
      ),
    );
    lanes = curves.map((_, s) => byLane.map((x) => x[s] ?? 0));
    room = Math.max(0, pool - sum(lanes.map((x) => Math.max(0, floor - sum(x)))));
  }
  return lanes;
}

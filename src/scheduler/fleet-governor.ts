/**
 * The fleet governor of one model pool across scheduler shards (issue 48; docs/design.md, "Beyond
 * one machine"). Pure: time is passed in. Every shard always holds a floor; what the quota leaves
 * above the floors is granted to shards in proportion to their backlogged weight, on a lease. A
 * grant is counted as held until it is replaced by its shard's renewal or its lease ends, so a shard
 * that stops renewing keeps its grant until expiry and then falls to its floor, and the sum of what
 * shards may use never exceeds the quota, whoever renews or lapses.
 */

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
}

/** A shard's share above its floor, valid until `expiresAt`. */
export interface Grant extends PoolQuota {
  shard: string;
  expiresAt: number;
}

/** A shard's renewal: the summed weight of its tenants with units queued (0: nothing backlogged). */
export interface ShardDemand {
  shard: string;
  weight: number;
}

const zero = (): PoolQuota => ({ slots: 0, requestsPerMinute: 0, tokensPerMinute: 0 });

/** The floor each shard gets: the configured one, lowered (whole units) until all floors fit the quota. */
export function effectiveFloor(cfg: FleetGovernorConfig): PoolQuota {
  const n = Math.max(1, cfg.shards.length);
  const f = zero();
  for (const d of DIMS) f[d] = Math.max(0, Math.min(Math.floor(cfg.floor[d]), Math.floor(cfg.quota[d] / n)));
  return f;
}

/** Grants held now: those whose lease has not ended. */
export function liveGrants(grants: ReadonlyMap<string, Grant>, now: number): Map<string, Grant> {
  return new Map([...grants].filter(([, g]) => now < g.expiresAt));
}

/**
 * One renewal round. The shards in `demands` renew: each gets a new grant replacing its old one,
 * in proportion to its weight, out of what the floors and the live grants of the shards that did
 * not renew leave. Shards that did not renew keep their live grants; ended ones are dropped.
 * Grants are whole units (rounded down), so the sum never passes the quota. Returns every live grant.
 */
export function renewGrants(
  cfg: FleetGovernorConfig,
  held: ReadonlyMap<string, Grant>,
  demands: readonly ShardDemand[],
  now: number,
): Map<string, Grant> {
  const known = new Set(cfg.shards);
  const renewing = new Map<string, number>();
  for (const d of demands) {
    if (known.has(d.shard)) renewing.set(d.shard, Number.isFinite(d.weight) ? Math.max(0, d.weight) : 0);
  }
  const next = new Map([...liveGrants(held, now)].filter(([s]) => !renewing.has(s)));
  const floor = effectiveFloor(cfg);
  const spare = zero();
  for (const d of DIMS) {
    const kept = [...next.values()].reduce((a, g) => a + g[d], 0);
    spare[d] = Math.max(0, Math.floor(cfg.quota[d]) - cfg.shards.length * floor[d] - kept);
  }
  const total = [...renewing.values()].reduce((a, w) => a + w, 0);
  for (const [shard, weight] of renewing) {
    const g: Grant = { shard, expiresAt: now + cfg.leaseMs, ...zero() };
    if (total > 0) for (const d of DIMS) g[d] = Math.floor((spare[d] * weight) / total);
    next.set(shard, g);
  }
  return next;
}

/** What a shard may use now: its floor, plus its grant while the grant's lease holds. */
export function allowance(cfg: FleetGovernorConfig, grant: Grant | undefined, now: number): PoolQuota {
  const a = effectiveFloor(cfg);
  if (grant && now < grant.expiresAt) for (const d of DIMS) a[d] += grant[d];
  return a;
}

/** The most the shards may use together now (floors of every shard plus live grants), per dimension. */
export function fleetTotal(
  cfg: FleetGovernorConfig,
  grants: ReadonlyMap<string, Grant>,
  now: number,
): PoolQuota {
  const t = zero();
  for (const shard of cfg.shards) {
    const a = allowance(cfg, grants.get(shard), now);
    for (const d of DIMS) t[d] += a[d];
  }
  return t;
}

/** Whether the fleet's total stays within the quota in every dimension. */
export function withinQuota(
  cfg: FleetGovernorConfig,
  grants: ReadonlyMap<string, Grant>,
  now: number,
): boolean {
  const t = fleetTotal(cfg, grants, now);
  return DIMS.every((d) => t[d] <= cfg.quota[d]);
}

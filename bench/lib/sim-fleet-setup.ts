import { DEFAULT_GOVERNOR, FleetScheduler, defaultTenantSettings, shardOf } from '../../src/scheduler';
import type { FleetGovernorConfig, PoolQuota } from '../../src/scheduler';
import type { FleetTrace } from './sim-fleet-trace';
import type { SimOptions } from './sim-options';
import type { SimTenants } from './sim-workload';

export const T0 = Date.UTC(2025, 0, 1);

/** Every core's lane floors, and the governor's for splitting the fleet by lane. */
export const LANE_FLOORS = { standard: 0.1, batch: 0.05 };

export interface SimFleet {
  ids: string[];
  names: string[];
  /** Each tenant's shard, by index. */
  home: Int32Array;
  quota: PoolQuota;
  gcfg: FleetGovernorConfig;
  cores: FleetScheduler[];
}

/**
 * The sharded sim's fleet: the shard map (whales by override, the rest by hash), the governor's
 * quota and floors, and one core per shard holding its tenants. Governed cores start at their
 * floor's slots; the oracle's one core has the whole quota.
 */
export function buildFleet(
  o: SimOptions,
  tenants: SimTenants,
  trace: FleetTrace,
  shards: number,
  governed: boolean,
): SimFleet {
  const ids = Array.from({ length: shards }, (_, k) => `shard-${k}`);
  const overrides = Object.fromEntries(
    Array.from({ length: trace.whales }, (_, w) => [`tenant-${w}`, ids[w % shards]!]),
  );
  const map = { version: 1, shards: ids, overrides };
  const names = Array.from({ length: o.tenants }, (_, t) => `tenant-${t}`);
  const home = Int32Array.from(names, (n) => ids.indexOf(shardOf(map, n)));
  const quota = { slots: o.concurrency, requestsPerMinute: 60 * o.concurrency, tokensPerMinute: o.tpm };
  const gcfg: FleetGovernorConfig = {
    quota,
    floor: {
      slots: Math.max(1, Math.floor((o.floorShare * quota.slots) / shards)),
      requestsPerMinute: Math.floor((o.floorShare * quota.requestsPerMinute) / shards),
      tokensPerMinute: Math.floor((o.floorShare * quota.tokensPerMinute) / shards),
    },
    shards: ids,
    leaseMs: 3 * o.grantMs,
    laneFloors: LANE_FLOORS,
  };
  const cores = ids.map(() =>
    FleetScheduler.create(
      {
        settings: {
          concurrency: governed ? gcfg.floor.slots : o.concurrency,
          floors: LANE_FLOORS,
          leaseTtlSeconds: 60,
          globalMaxQueued: o.units,
        },
        governor: {
          ...DEFAULT_GOVERNOR,
          maxConcurrency: o.concurrency * 2,
          initialTokensPerMinute: o.tpm / shards,
          minTokensPerMinute: o.tpm / 100 / shards,
          maxTokensPerMinute: o.tpm * 1.5,
          increaseTokensPerMinute: o.tpm / 100 / shards,
        },
      },
      T0,
    ),
  );
  names.forEach((n, t) =>
    cores[home[t]!]!.upsertTenant(
      n,
      defaultTenantSettings({
        weight: tenants.weights[t]!,
        maxQueued: o.units,
        maxInFlight: tenants.maxInFlight[t]!,
      }),
      T0,
    ),
  );

  return { ids, names, home, quota, gcfg, cores };
}

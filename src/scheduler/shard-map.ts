import { fnv1a } from './key-queue';

/**
 * Which scheduler shard owns a tenant (issue 48; docs/design.md, "Beyond one machine"). A tenant
 * belongs to `overrides[tenant]` when it has one (a whale placed on a shard of its own), else to
 * the shard at its FNV-1a hash modulo the shard count. The version names the map: a change of
 * shards or overrides is a new version, and moving a tenant is a hand-over between two versions.
 */
export interface ShardMap {
  version: number;
  shards: readonly string[];
  overrides: Readonly<Record<string, string>>;
}

/** The shard that owns `tenant` under `map` (the map must name at least one shard). */
export function shardOf(map: ShardMap, tenant: string): string {
  const o = map.overrides[tenant];
  if (o !== undefined && map.shards.includes(o)) return o;
  return map.shards[fnv1a(tenant) % map.shards.length] as string;
}

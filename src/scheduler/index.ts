export { FleetScheduler } from './fleet-scheduler';
export type { BudgetRefusal } from './recovery';
export { RECOVERY_HOLD_WINDOW_MS, holdWindowMs } from './recovery';
export type { SchedulerInit } from './fleet-scheduler';
export type { SettingsPatch } from './fleet-settings';
export type { PlainSnapshot, SchedulerSnapshot } from './snapshot-format';
export { DEFAULT_GOVERNOR, PROBE_DEFAULTS } from './defaults';
export { DEFAULT_INTERACTIVE_RESERVE } from './reserve';
export { defaultTenantSettings } from './tenants';
export { MAX_CHARGE_KEYS, MAX_FENCED_OWNERS, chargeId, ownerId } from './charge-keys';
export { LEDGER_RING_PER_TENANT, LEDGER_RING_TOTAL } from './ledger-log';
export { MAX_RETRY_AFTER_S, NO_PERIOD_RETRY_AFTER_S } from './retry-after';
export * from './types';
export {
  DEMAND_GRID,
  allowance,
  demandCurve,
  effectiveFloor,
  fleetTotal,
  renewGrants,
  withinQuota,
} from './fleet-governor';
export type { FleetGovernorConfig, Grant, PoolQuota, ShardDemand } from './fleet-governor';
export { shardOf } from './shard-map';
export type { ShardMap } from './shard-map';

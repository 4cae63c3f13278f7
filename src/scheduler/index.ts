export { FleetScheduler } from './fleet-scheduler';
export type { SchedulerInit } from './fleet-scheduler';
export type { SettingsPatch } from './fleet-settings';
export type { AnySchedulerSnapshot, SchedulerSnapshot, SchedulerSnapshotV1 } from './snapshot-format';
export { DEFAULT_GOVERNOR } from './defaults';
export { defaultTenantSettings } from './tenants';
export { LEDGER_RING_PER_TENANT, LEDGER_RING_TOTAL } from './ledger-log';
export { MAX_RETRY_AFTER_S, NO_PERIOD_RETRY_AFTER_S } from './retry-after';
export * from './types';

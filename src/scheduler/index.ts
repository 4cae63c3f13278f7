export { FleetScheduler } from './scheduler';
export type { SchedulerInit, SettingsPatch } from './scheduler';
export type { SchedulerSnapshot } from './snapshot';
export { DEFAULT_GOVERNOR } from './defaults';
export { defaultTenantSettings } from './tenants';
export { LEDGER_RING_PER_TENANT, LEDGER_RING_TOTAL } from './ledger-log';
export { MAX_RETRY_AFTER_S, NO_PERIOD_RETRY_AFTER_S } from './retry-after';
export * from './types';

import path from 'node:path';
import type { ApiStore } from './api/api-store';
import { openPgApiStore } from './api/api-store-pg';
import { openSqliteStore } from './api/api-store-sqlite';
import type { BatchItemStore } from './batch-items/batch-items';
import { openSqliteBatchItems } from './batch-items/batch-items-sqlite';
import { openPgBatchItems } from './batch-items/batch-items-pg';
import type { CallIntentStore } from './call-intents/call-intents';
import { openSqliteCallIntents } from './call-intents/call-intents-sqlite';
import { openPgCallIntents } from './call-intents/call-intents-pg';
import type { EffectStore } from './effects/effect-store';
import { openSqliteEffectStore } from './effects/effect-store-sqlite';
import { openPgEffectStore } from './effects/effect-store-pg';
import { isPostgresUrl } from './engine/pg';
import type { PayloadStore } from './payloads/payload-store';
import { openSqlitePayloads } from './payloads/payload-store-sqlite';
import { openPgPayloads } from './payloads/payload-store-pg';
import type { ReportLog } from './report-log/report-log';
import { openSqliteReportLog } from './report-log/report-log-sqlite';
import { openPgReportLog } from './report-log/report-log-pg';
import type { UpdatePermits } from './update-permits/update-permits';
import { openSqliteUpdatePermits } from './update-permits/update-permits-sqlite';
import { openPgUpdatePermits } from './update-permits/update-permits-pg';
import type { SchedulerStateStore } from './scheduler-state/scheduler-state';
import { openSqliteSchedulerState } from './scheduler-state/scheduler-state-sqlite';
import { openPgSchedulerState } from './scheduler-state/scheduler-state-pg';

/** What a store's location is read from. */
export interface StoreConfig {
  databaseUrl: string | undefined;
  dataDir: string;
}

/**
 * Opens a store at `location` on the engine it names: a `postgres://` URL (shared by every host) or a
 * SQLite file path (one host; the processes on it share the file; created with its directory).
 */
function openAt<S>(
  location: string,
  sqlite: (file: string) => S,
  pg: (url: string) => Promise<S>,
): Promise<S> {
  return isPostgresUrl(location) ? pg(location) : Promise.resolve(sqlite(location));
}

/** Where a store lives for a config: `DATABASE_URL` when set, else the file `DATA_DIR/<file>`. */
function locationOf(config: StoreConfig, file: string): string {
  return config.databaseUrl ?? path.resolve(config.dataDir, file);
}

/** The API's store (tenants, idempotency keys, events); `:memory:` works for SQLite too. */
export function openStore(location: string): Promise<ApiStore> {
  return openAt(location, openSqliteStore, openPgApiStore);
}

/** Where the API store lives: `DATABASE_URL`, else `DATA_DIR/fairway.db`. */
export function apiStoreLocation(config: StoreConfig): string {
  return locationOf(config, 'fairway.db');
}

/**
 * The scheduler's operator state (drain, runtime settings), at the API store's location
 * (`apiStoreLocation`): every API process shares it, and whoever starts a scheduler chain reads it.
 */
export function openSchedulerState(location: string): Promise<SchedulerStateStore> {
  return openAt(location, openSqliteSchedulerState, openPgSchedulerState);
}

/** The effect store (what each activity applied and delivered, by idempotency key). */
export function openEffectStore(location: string): Promise<EffectStore> {
  return openAt(location, openSqliteEffectStore, openPgEffectStore);
}

/** Where the effect store lives: `DATABASE_URL`, else `DATA_DIR/effects.db`. */
export function effectStoreLocation(config: StoreConfig): string {
  return locationOf(config, 'effects.db');
}

/** The batch item store. */
export function openBatchItems(location: string): Promise<BatchItemStore> {
  return openAt(location, openSqliteBatchItems, openPgBatchItems);
}

/**
 * Where batch items live: `DATABASE_URL` (every API and worker shares it), else `DATA_DIR/batch-items.db`
 * (the API and the workers of one host share the file, as they do the effect store).
 */
export function batchItemsLocation(config: StoreConfig): string {
  return locationOf(config, 'batch-items.db');
}

/** The call intent store. */
export function openCallIntents(location: string): Promise<CallIntentStore> {
  return openAt(location, openSqliteCallIntents, openPgCallIntents);
}

/**
 * The log of worker reports the scheduler pulls, in the call intents' store (`callIntentsLocation`):
 * every worker that makes model calls reaches it already.
 */
export function openReportLog(location: string): Promise<ReportLog> {
  return openAt(location, openSqliteReportLog, openPgReportLog);
}

/**
 * The fleet-wide permits for the workers' scheduler updates, in the call intents' store
 * (`callIntentsLocation`), which every worker reaches already.
 */
export function openUpdatePermits(location: string): Promise<UpdatePermits> {
  return openAt(location, openSqliteUpdatePermits, openPgUpdatePermits);
}

/**
 * Where call intents live: `DATABASE_URL` (every worker on every host sweeps the others' rows), else
 * `DATA_DIR/call-intents.db` (the workers of one host share the file).
 */
export function callIntentsLocation(config: StoreConfig): string {
  return locationOf(config, 'call-intents.db');
}

/** The payload store (claim-checked Temporal payloads). */
export function openPayloadStore(location: string): Promise<PayloadStore> {
  return openAt(location, openSqlitePayloads, openPgPayloads);
}

/**
 * Where claim-checked payloads live: `DATABASE_URL` (every client and worker on every host reads
 * them), else `DATA_DIR/payloads.db` (the processes of one host share the file).
 */
export function payloadStoreLocation(config: StoreConfig): string {
  return locationOf(config, 'payloads.db');
}

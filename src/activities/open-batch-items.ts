import path from 'node:path';
import { isPostgresUrl } from '../util/pg';
import { openSqliteBatchItems } from './batch-items';
import type { BatchItemStore } from './batch-items';
import { openPgBatchItems } from './batch-items-pg';

/** Opens the batch item store at `location`: a `postgres://` URL or a SQLite file path. */
export function openBatchItems(location: string): Promise<BatchItemStore> {
  return isPostgresUrl(location)
    ? openPgBatchItems(location)
    : Promise.resolve(openSqliteBatchItems(location));
}

/**
 * Where batch items live for a config: `DATABASE_URL` when set (every API and worker shares it), else
 * `DATA_DIR/batch-items.db` (the API and the workers of one host share the file, as they do the effect store).
 */
export function batchItemsLocation(config: { databaseUrl: string | undefined; dataDir: string }): string {
  return config.databaseUrl ?? path.resolve(config.dataDir, 'batch-items.db');
}

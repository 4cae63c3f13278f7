import path from 'node:path';
import { isPostgresUrl } from '../util/pg';
import { openSqliteCallIntents } from './call-intents';
import type { CallIntentStore } from './call-intents';
import { openPgCallIntents } from './call-intents-pg';

/** Opens the call intent store at `location`: a `postgres://` URL or a SQLite file path. */
export function openCallIntents(location: string): Promise<CallIntentStore> {
  return isPostgresUrl(location)
    ? openPgCallIntents(location)
    : Promise.resolve(openSqliteCallIntents(location));
}

/**
 * Where call intents live for a config: `DATABASE_URL` when set (every worker on every host sweeps
 * the others' rows), else `DATA_DIR/call-intents.db` (the workers of one host share the file).
 */
export function callIntentsLocation(config: { databaseUrl: string | undefined; dataDir: string }): string {
  return config.databaseUrl ?? path.resolve(config.dataDir, 'call-intents.db');
}

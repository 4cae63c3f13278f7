import path from 'node:path';
import { isPostgresUrl } from '../util/pg';
import { openSqliteEffectStore } from './effect-store';
import type { EffectStore } from './effect-store';
import { openPgEffectStore } from './effect-store-pg';

/**
 * Opens the effect store at `location`: a `postgres://` URL (shared by every host) or a SQLite file
 * path (one host; processes on it share the file).
 */
export function openEffectStore(location: string): Promise<EffectStore> {
  return isPostgresUrl(location)
    ? openPgEffectStore(location)
    : Promise.resolve(openSqliteEffectStore(location));
}

/** Where the effect store lives for a config: `DATABASE_URL` when set, else `DATA_DIR/effects.db`. */
export function effectStoreLocation(config: { databaseUrl: string | undefined; dataDir: string }): string {
  return config.databaseUrl ?? path.resolve(config.dataDir, 'effects.db');
}

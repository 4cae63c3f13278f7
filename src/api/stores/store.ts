import { resolve } from 'node:path';
import { isPostgresUrl } from '../../util/pg';
import { EVENTS_DDL } from './event-store';
import type { ApiStore } from './api-store';
import { SqliteEventStore } from './event-store-sqlite';
import { IDEMPOTENCY_DDL, SqliteIdempotencyStore } from './idempotency';
import { openPgApiStore } from './pg/api-store-pg';
import { migrateTenants, SqliteTenantStore, TENANTS_DDL } from './tenants';
import { openSqliteFile } from '../../util/sqlite';

export type { ApiStore } from './api-store';

const SCHEMA_VERSION = 3;

/** Opens (creating file and directory if needed) the SQLite API store at `filePath`; `:memory:` works too. */
export function openSqliteStore(filePath: string): ApiStore {
  const db = openSqliteFile(filePath);
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version < SCHEMA_VERSION) {
    db.exec(
      `BEGIN; ${TENANTS_DDL} ${IDEMPOTENCY_DDL} ${EVENTS_DDL} PRAGMA user_version = ${SCHEMA_VERSION}; COMMIT;`,
    );
    migrateTenants(db);
  }
  const tenants = new SqliteTenantStore(db);
  return {
    tenants,
    idempotency: new SqliteIdempotencyStore(db),
    events: new SqliteEventStore(db),
    listTenants: () => tenants.list(),
    close: async () => {
      db.close();
    },
  };
}

/** Opens the API store at `location`: a `postgres://` URL, or a SQLite file path. */
export function openStore(location: string): Promise<ApiStore> {
  return isPostgresUrl(location) ? openPgApiStore(location) : Promise.resolve(openSqliteStore(location));
}

/** Where the API store lives for a config: `DATABASE_URL` when set, else `DATA_DIR/fairway.db`. */
export function apiStoreLocation(config: { databaseUrl: string | undefined; dataDir: string }): string {
  return config.databaseUrl ?? resolve(config.dataDir, 'fairway.db');
}

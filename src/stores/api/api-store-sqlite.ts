import { EVENTS_DDL } from '../events/event-store';
import type { ApiStore } from './api-store';
import { migrateEvents, SqliteEventStore } from '../events/event-store-sqlite';
import { IDEMPOTENCY_DDL } from '../idempotency/idempotency';
import { SqliteIdempotencyStore } from '../idempotency/idempotency-sqlite';
import { TENANTS_DDL } from '../tenants/tenants';
import { migrateTenants, SqliteTenantStore } from '../tenants/tenants-sqlite';
import { openSqliteFile } from '../engine/sqlite';
import { RATE_BUCKETS_DDL } from '../rate-limits/rate-limits';
import { SqliteRateLimitStore } from '../rate-limits/rate-limits-sqlite';
import { WEBHOOKS_DDL } from '../webhooks/webhooks';
import { SqliteWebhookStore } from '../webhooks/webhooks-sqlite';

const SCHEMA_VERSION = 9;

/** Opens (creating file and directory if needed) the SQLite API store at `filePath`; `:memory:` works too. */
export function openSqliteStore(filePath: string): ApiStore {
  const db = openSqliteFile(filePath);
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version < SCHEMA_VERSION) {
    db.exec(
      `BEGIN; ${TENANTS_DDL} ${IDEMPOTENCY_DDL} ${EVENTS_DDL} ${RATE_BUCKETS_DDL} ${WEBHOOKS_DDL} PRAGMA user_version = ${SCHEMA_VERSION}; COMMIT;`,
    );
    migrateTenants(db);
    migrateEvents(db);
  }
  const tenants = new SqliteTenantStore(db);
  return {
    tenants,
    idempotency: new SqliteIdempotencyStore(db),
    events: new SqliteEventStore(db),
    rateLimits: new SqliteRateLimitStore(db),
    webhooks: new SqliteWebhookStore(db),
    listTenants: () => tenants.list(),
    close: async () => {
      db.close();
    },
  };
}

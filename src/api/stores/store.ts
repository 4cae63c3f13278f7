import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { EVENTS_DDL, EventStore } from './event-store';
import { IDEMPOTENCY_DDL, IdempotencyStore } from './idempotency';
import { TENANTS_DDL, TenantStore, migrateTenants, type TenantRecord } from './tenants';

/** The API's own state: tenants (settings and key hashes) and idempotency keys, in one SQLite file. */
export interface ApiStore {
  readonly tenants: TenantStore;
  readonly idempotency: IdempotencyStore;
  /** Events, their runs, triggers and webhook secrets. */
  readonly events: EventStore;
  /** Every tenant with its settings, e.g. to re-sync them to the scheduler at startup. */
  listTenants(): TenantRecord[];
  close(): void;
}

const SCHEMA_VERSION = 3;

/** Opens (creating file and directory if needed) the API store at `filePath`; `:memory:` works too. */
export function openStore(filePath: string): ApiStore {
  if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true });
  const db = new Database(filePath);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version < SCHEMA_VERSION) {
    db.exec(
      `BEGIN; ${TENANTS_DDL} ${IDEMPOTENCY_DDL} ${EVENTS_DDL} PRAGMA user_version = ${SCHEMA_VERSION}; COMMIT;`,
    );
    migrateTenants(db);
  }
  const tenants = new TenantStore(db);
  const idempotency = new IdempotencyStore(db);
  return {
    tenants,
    idempotency,
    events: new EventStore(db),
    listTenants: () => tenants.list(),
    close: () => db.close(),
  };
}

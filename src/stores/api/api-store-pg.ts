import { isPgUnavailable, migrate, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
import { ApiError } from '../../contract/errors';
import type { ApiStore } from './api-store';
import { PgEventStore } from '../events/event-store-pg';
import { PgIdempotencyStore } from '../idempotency/idempotency-pg';
import { PgTenantStore } from '../tenants/tenants-pg';
import { PgRateLimitStore } from '../rate-limits/rate-limits-pg';
import { PgWebhookStore, WEBHOOKS_PG_DDL, WEBHOOKS_PG_PRUNE_INDEXES_DDL } from '../webhooks/webhooks-pg';

/** The same tables as the SQLite file (times in ms since the epoch, JSON kept as text). */
const MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE tenants (
        id            TEXT PRIMARY KEY,
        weight        DOUBLE PRECISION NOT NULL,
        max_queued    INTEGER NOT NULL,
        max_in_flight INTEGER NOT NULL,
        budget_tokens BIGINT,
        budget_period TEXT NOT NULL,
        key_hash      TEXT NOT NULL UNIQUE,
        created_at    BIGINT NOT NULL,
        updated_at    BIGINT NOT NULL
      );
      CREATE TABLE idempotency_keys (
        tenant     TEXT NOT NULL,
        key        TEXT NOT NULL,
        body_hash  TEXT NOT NULL,
        run_id     TEXT NOT NULL,
        state      TEXT NOT NULL CHECK (state IN ('pending', 'done')),
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
      CREATE TABLE webhook_secrets (
        tenant     TEXT NOT NULL,
        source     TEXT NOT NULL,
        secret     TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, source)
      );
      CREATE TABLE triggers (
        tenant     TEXT NOT NULL,
        name       TEXT NOT NULL,
        spec       TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, name)
      );
      CREATE TABLE events (
        tenant          TEXT NOT NULL,
        event_id        TEXT NOT NULL,
        body_hash       TEXT NOT NULL,
        envelope        TEXT NOT NULL,
        received_at     BIGINT NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('pending', 'settled')),
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at BIGINT NOT NULL,
        claimed_until   BIGINT NOT NULL DEFAULT 0,
        replays         INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant, event_id)
      );
      CREATE INDEX events_due ON events (state, next_attempt_at);
      CREATE INDEX events_received ON events (received_at);
      CREATE TABLE event_runs (
        tenant           TEXT NOT NULL,
        event_id         TEXT NOT NULL,
        trigger          TEXT NOT NULL,
        run_id           TEXT NOT NULL,
        agent            TEXT NOT NULL,
        priority         TEXT NOT NULL,
        input            TEXT NOT NULL,
        estimated_tokens BIGINT NOT NULL,
        status           TEXT NOT NULL CHECK (status IN ('pending', 'started', 'refused', 'invalid_input')),
        refusal          TEXT,
        updated_at       BIGINT NOT NULL,
        PRIMARY KEY (tenant, event_id, trigger)
      );
    `,
  },
  {
    // What a run does when its budget runs out mid-run (tenant setting `onBudgetExhausted`).
    version: 2,
    sql: `ALTER TABLE tenants ADD COLUMN on_budget_exhausted TEXT NOT NULL DEFAULT 'fail'
            CHECK (on_budget_exhausted IN ('fail', 'park'));`,
  },
  {
    // Token buckets every API process shares (request and submission rates), and tenant disable.
    version: 3,
    sql: `
      CREATE TABLE rate_buckets (
        key    TEXT PRIMARY KEY,
        tokens DOUBLE PRECISION NOT NULL,
        at     BIGINT NOT NULL
      );
      ALTER TABLE tenants ADD COLUMN disabled_at BIGINT;
    `,
  },
  {
    // A tenant's optional approver key: it decides the tenant's gates and submits nothing.
    version: 4,
    sql: 'ALTER TABLE tenants ADD COLUMN approver_key_hash TEXT UNIQUE;',
  },
  // Webhooks out: endpoints, the outbox, deliveries and their attempts, the visibility scan's cursor.
  { version: 5, sql: WEBHOOKS_PG_DDL },
  // Pruning webhooks reads deliveries by event and events by age.
  { version: 6, sql: WEBHOOKS_PG_PRUNE_INDEXES_DDL },
  // A tenant's fairness-key weights (`keyWeights`), JSON text; null: none.
  { version: 7, sql: 'ALTER TABLE tenants ADD COLUMN key_weights TEXT;' },
  // The fairness key an event's run carries (its trigger's `fairnessKey`); null: the tenant's default.
  { version: 8, sql: 'ALTER TABLE event_runs ADD COLUMN fairness_key TEXT;' },
];

/** Seconds a caller waits before retrying while the database is unreachable. */
export const DB_UNAVAILABLE_RETRY_SECONDS = 5;

/**
 * The database being down or restarting is a 503 with Retry-After, not a 500: nothing was changed
 * (a transaction that lost its connection is rolled back by the server) and trying again is right.
 */
export function withDbUnavailableAs503<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (err) {
          if (!isPgUnavailable(err)) throw err;
          throw new ApiError(
            'unavailable',
            'The database is unreachable right now; try again shortly.',
            undefined,
            DB_UNAVAILABLE_RETRY_SECONDS,
          );
        }
      };
    },
  });
}

/** The API's store in PostgreSQL (`DATABASE_URL`): any number of API processes on any hosts share it. */
export async function openPgApiStore(url: string): Promise<ApiStore> {
  const pool = openPool(url);
  try {
    await migrate(pool, 'api', MIGRATIONS);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const tenants = withDbUnavailableAs503(new PgTenantStore(pool));
  return {
    tenants,
    idempotency: withDbUnavailableAs503(new PgIdempotencyStore(pool)),
    events: withDbUnavailableAs503(new PgEventStore(pool)),
    rateLimits: withDbUnavailableAs503(new PgRateLimitStore(pool)),
    webhooks: withDbUnavailableAs503(new PgWebhookStore(pool)),
    listTenants: () => tenants.list(),
    close: () => pool.end(),
  };
}

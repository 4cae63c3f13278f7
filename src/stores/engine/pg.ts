import { Pool } from 'pg';
import type { PoolClient } from 'pg';

/** True when `location` names a PostgreSQL database rather than a file. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//.test(location);

/** `?` placeholders numbered as PostgreSQL wants them (`$1`, `$2`, …). */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A set of statements written with `?` placeholders (shared with SQLite), numbered for PostgreSQL. */
export function numberedSql<K extends string>(statements: Record<K, string>): Record<K, string> {
  return Object.fromEntries(
    Object.entries<string>(statements).map(([k, v]) => [k, numberedPlaceholders(v)]),
  ) as Record<K, string>;
}

/** A connection pool that does not crash the process when an idle connection dies (e.g. a server restart). */
export function openPool(url: string, max = 10): Pool {
  const pool = new Pool({ connectionString: url, max, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {
    /* an idle client lost its connection; the next query takes a new one */
  });
  // A client checked out of the pool (a transaction between two statements) has no pool listener:
  // when the server goes away, its 'error' event would be unhandled and end the process. The same
  // error reaches whoever uses the client, as a rejected query, and the pool drops the dead client.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** One schema step; applied once per database, in order, under `name`. */
export interface Migration {
  version: number;
  sql: string;
}

/**
 * Brings `name`'s tables to the newest migration. Several processes may start at once: an advisory
 * lock serialises them, and each step runs in its own transaction with its version row.
 */
export async function migrate(pool: Pool, name: string, migrations: Migration[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`fairway-migrate:${name}`]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS fairway_migrations (name TEXT NOT NULL, version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (name, version))',
    );
    const done = new Set(
      (
        await client.query<{ version: number }>('SELECT version FROM fairway_migrations WHERE name = $1', [
          name,
        ])
      ).rows.map((r) => r.version),
    );
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO fairway_migrations (name, version) VALUES ($1, $2)', [name, m.version]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Runs `fn` in one transaction on one pooled connection; rolls back when it throws. */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    // A connection that could not even roll back is dead: destroy it rather than pool it.
    client.release(broken);
  }
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown: the server is stopping
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Client was closed|Connection ended/i;

/**
 * True when `err` says the database cannot be reached right now (down, restarting, refusing
 * connections), as opposed to a query it refused: retrying later is the right move.
 */
export function isPgUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if (err instanceof AggregateError) return err.errors.some(isPgUnavailable);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return err instanceof Error && UNAVAILABLE_MESSAGE.test(err.message);
}

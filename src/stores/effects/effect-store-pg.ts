import { migrate, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
import { deliveryOf, HOLD_SQL, SUMMARY_SQL } from './effect-store';
import type { DeliveryRow } from './effect-store';
import type { EffectStore } from './effect-store';

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE effects (
        key TEXT PRIMARY KEY,
        payload JSONB NOT NULL,
        applied_at BIGINT NOT NULL
      );
      -- Append-only log of every attempt, without uniqueness of its own (see the SQLite store).
      CREATE TABLE attempts (
        id BIGSERIAL PRIMARY KEY,
        key TEXT NOT NULL,
        applied INTEGER NOT NULL,
        at BIGINT NOT NULL
      );
      CREATE INDEX attempts_applied_key ON attempts (key) WHERE applied = 1;
    `,
  },
  { version: 2, sql: 'ALTER TABLE effects ADD COLUMN delivered_at BIGINT' },
  // What the delivery returned (a user's effect function's JSON result), as text: exactly as recorded.
  { version: 3, sql: 'ALTER TABLE effects ADD COLUMN result TEXT' },
  // Which attempt may act on an undelivered effect, and until when.
  { version: 4, sql: 'ALTER TABLE effects ADD COLUMN held_by TEXT, ADD COLUMN held_until BIGINT' },
];
const HOLD = numberedSql(HOLD_SQL);

/** The effect store on PostgreSQL: every worker and API on every host shares it. */
export async function openPgEffectStore(url: string): Promise<EffectStore> {
  const pool = openPool(url);
  try {
    await migrate(pool, 'effects', MIGRATIONS);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const delivery = async (key: string) =>
    deliveryOf(
      (await pool.query<DeliveryRow>('SELECT delivered_at, result FROM effects WHERE key = $1', [key]))
        .rows[0],
    );
  return {
    async apply(key, payload) {
      const now = Date.now();
      // One statement: the insert that wins the key and the attempt's log row commit together.
      const r = await pool.query<{ applied: number }>(
        `WITH ins AS (
           INSERT INTO effects (key, payload, applied_at) VALUES ($1, $2, $3)
           ON CONFLICT (key) DO NOTHING RETURNING 1
         )
         INSERT INTO attempts (key, applied, at)
         SELECT $1, CASE WHEN EXISTS (SELECT 1 FROM ins) THEN 1 ELSE 0 END, $3
         RETURNING applied`,
        [key, JSON.stringify(payload), now],
      );
      const applied = r.rows[0]?.applied === 1;
      if (applied) return { applied, delivered: false };
      return { applied, ...(await delivery(key)) };
    },
    delivery,
    async markDelivered(key, result) {
      await pool.query(
        'UPDATE effects SET delivered_at = $1, result = $2 WHERE key = $3 AND delivered_at IS NULL',
        [Date.now(), result ?? null, key],
      );
    },
    async hold(key, holder, until, now) {
      const r = await pool.query(HOLD.take, [holder, until, key, holder, now]);
      if (r.rowCount === 1) return 'held';
      const d = await pool.query<{ delivered_at: string | null }>(HOLD.state, [key]);
      return d.rows[0]?.delivered_at != null ? 'delivered' : 'busy';
    },
    async release(key, holder) {
      await pool.query(HOLD.release, [key, holder]);
    },
    async summary() {
      const client = await pool.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const n = async (sql: string) => Number((await client.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
        const s = {
          effects: await n(SUMMARY_SQL.effects),
          attempts: await n(SUMMARY_SQL.attempts),
          duplicates: await n(SUMMARY_SQL.duplicates),
        };
        await client.query('COMMIT');
        return s;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}

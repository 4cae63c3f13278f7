import { migrate, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
import { PAYLOADS_DDL, PAYLOADS_USED_AT, PAYLOAD_SQL, PRUNE_BATCH, TOUCH_EVERY_MS } from './payload-store';
import type { PayloadStore } from './payload-store';

const MIGRATIONS: Migration[] = [
  { version: 1, sql: PAYLOADS_DDL.replace('BLOB', 'BYTEA') },
  { version: 2, sql: PAYLOADS_USED_AT },
];
const SQL = numberedSql(PAYLOAD_SQL);

/** The payload store on PostgreSQL (`DATABASE_URL`): every client and worker on every host shares it. */
export async function openPgPayloads(url: string): Promise<PayloadStore> {
  const pool = openPool(url);
  try {
    await migrate(pool, 'payloads', MIGRATIONS);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    async put(key, data, now = Date.now()) {
      await pool.query(SQL.put, [
        key,
        Buffer.from(data.buffer, data.byteOffset, data.byteLength),
        data.byteLength,
        now,
        now,
      ]);
    },
    async get(key, now = Date.now()) {
      const r = await pool.query<{ data: Buffer; used_at: string }>(SQL.get, [key]);
      const row = r.rows[0];
      if (!row) return null;
      if (now - Number(row.used_at) >= TOUCH_EVERY_MS) await pool.query(SQL.touch, [now, key]);
      return new Uint8Array(row.data);
    },
    async touch(key, now = Date.now()) {
      await pool.query(SQL.touch, [now, key]);
    },
    async prune(before, limit = PRUNE_BATCH) {
      return (await pool.query(SQL.prune, [before, limit])).rowCount ?? 0;
    },
    close: () => pool.end(),
  };
}

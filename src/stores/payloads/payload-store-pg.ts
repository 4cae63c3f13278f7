import { migrate, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
import { PAYLOADS_DDL, PAYLOAD_SQL } from './payload-store';
import type { PayloadStore } from './payload-store';

const MIGRATIONS: Migration[] = [{ version: 1, sql: PAYLOADS_DDL.replace('BLOB', 'BYTEA') }];
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
      ]);
    },
    async get(key) {
      const r = await pool.query<{ data: Buffer }>(SQL.get, [key]);
      return r.rows[0] ? new Uint8Array(r.rows[0].data) : null;
    },
    close: () => pool.end(),
  };
}

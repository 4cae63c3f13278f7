import { openSqliteFile } from '../engine/sqlite';
import { PAYLOADS_DDL, PAYLOADS_USED_AT, PAYLOAD_SQL, PRUNE_BATCH, TOUCH_EVERY_MS } from './payload-store';
import type { PayloadStore } from './payload-store';

/** The payload store in a SQLite file (created with its directory; the processes of a host share it). */
export function openSqlitePayloads(filePath: string): PayloadStore {
  const db = openSqliteFile(filePath);
  db.exec(PAYLOADS_DDL);
  const columns = db.prepare("SELECT name FROM pragma_table_info('payloads')").pluck().all() as string[];
  if (!columns.includes('used_at')) db.exec(PAYLOADS_USED_AT);
  const put = db.prepare(PAYLOAD_SQL.put);
  const get = db.prepare(PAYLOAD_SQL.get);
  const touch = db.prepare(PAYLOAD_SQL.touch);
  const prune = db.prepare(PAYLOAD_SQL.prune);
  return {
    async put(key, data, now = Date.now()) {
      put.run(key, Buffer.from(data.buffer, data.byteOffset, data.byteLength), data.byteLength, now, now);
    },
    async get(key, now = Date.now()) {
      const row = get.get(key) as { data: Buffer; used_at: number } | undefined;
      if (!row) return null;
      if (now - Number(row.used_at) >= TOUCH_EVERY_MS) touch.run(now, key);
      return new Uint8Array(row.data);
    },
    async touch(key, now = Date.now()) {
      touch.run(now, key);
    },
    async prune(before, limit = PRUNE_BATCH) {
      return prune.run(before, limit).changes;
    },
    async close() {
      db.close();
    },
  };
}

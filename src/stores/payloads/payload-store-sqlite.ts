import { openSqliteFile } from '../engine/sqlite';
import { PAYLOADS_DDL, PAYLOAD_SQL } from './payload-store';
import type { PayloadStore } from './payload-store';

/** The payload store in a SQLite file (created with its directory; the processes of a host share it). */
export function openSqlitePayloads(filePath: string): PayloadStore {
  const db = openSqliteFile(filePath);
  db.exec(PAYLOADS_DDL);
  const put = db.prepare(PAYLOAD_SQL.put);
  const get = db.prepare(PAYLOAD_SQL.get);
  return {
    async put(key, data, now = Date.now()) {
      put.run(key, Buffer.from(data.buffer, data.byteOffset, data.byteLength), data.byteLength, now);
    },
    async get(key) {
      const row = get.get(key) as { data: Buffer } | undefined;
      return row ? new Uint8Array(row.data) : null;
    },
    async close() {
      db.close();
    },
  };
}

import { openSqliteFile } from '../engine/sqlite';
import { PERMIT_SQL, UPDATE_PERMITS_DDL, acquireWith } from './update-permits';
import type { UpdatePermits } from './update-permits';

/** The update permits in the SQLite file `filePath`: the workers of one host share them (writes are serialised). */
export function openSqliteUpdatePermits(filePath: string): UpdatePermits {
  const db = openSqliteFile(filePath);
  db.exec(UPDATE_PERMITS_DDL);
  const take = db.prepare(PERMIT_SQL.take);
  const renew = db.prepare(PERMIT_SQL.renew);
  const release = db.prepare(PERMIT_SQL.release);
  return {
    acquire: (schedulerId, slots, holder, now, ttlMs) =>
      acquireWith(
        async (slot, until, at) => take.run(schedulerId, slot, holder, until, at).changes === 1,
        slots,
        now,
        ttlMs,
      ),
    async renew(schedulerId, slot, holder, until) {
      return renew.run(until, schedulerId, slot, holder).changes === 1;
    },
    async release(schedulerId, slot, holder) {
      release.run(schedulerId, slot, holder);
    },
    async close() {
      db.close();
    },
  };
}

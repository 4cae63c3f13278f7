import { migrate, numberedSql, openPool } from '../engine/pg';
import { PERMIT_SQL, UPDATE_PERMITS_DDL, acquireWith } from './update-permits';
import type { UpdatePermits } from './update-permits';

const SQL = numberedSql(PERMIT_SQL);

/**
 * The update permits on PostgreSQL (`DATABASE_URL`), shared by the workers of every host. Two
 * acquirers of one slot meet on its row: the second waits for the first's insert or takeover to
 * commit and then finds the lease live, so it changes nothing.
 */
export async function openPgUpdatePermits(url: string): Promise<UpdatePermits> {
  // A few updates at a time per worker (its coalescers and offer batcher): a small pool.
  const pool = openPool(url, 2);
  try {
    await migrate(pool, 'update-permits', [{ version: 1, sql: UPDATE_PERMITS_DDL }]);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    acquire: (schedulerId, slots, holder, now, ttlMs) =>
      acquireWith(
        async (slot, until, at) =>
          ((await pool.query(SQL.take, [schedulerId, slot, holder, until, at])).rowCount ?? 0) === 1,
        slots,
        now,
        ttlMs,
      ),
    async renew(schedulerId, slot, holder, until) {
      return ((await pool.query(SQL.renew, [until, schedulerId, slot, holder])).rowCount ?? 0) === 1;
    },
    async release(schedulerId, slot, holder) {
      await pool.query(SQL.release, [schedulerId, slot, holder]);
    },
    async close() {
      await pool.end();
    },
  };
}

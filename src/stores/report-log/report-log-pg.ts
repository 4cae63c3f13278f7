import { inTransaction, migrate, numberedSql, openPool } from '../engine/pg';
import { REPORT_SQL, reportLogDdl, toRow } from './report-log';
import type { ReportLog } from './report-log';

const SQL = numberedSql(REPORT_SQL);

/**
 * The report log on PostgreSQL (`DATABASE_URL`): the workers of every host append to it. Appends to
 * one scheduler's log hold a transaction lock of its own, so their sequence numbers commit in order
 * and a reader never passes a number another append has taken but not yet committed.
 */
export async function openPgReportLog(url: string): Promise<ReportLog> {
  // One append (the mailbox sends one report at a time) and one pull at a time: a small pool.
  const pool = openPool(url, 3);
  try {
    await migrate(pool, 'report-log', [{ version: 1, sql: reportLogDdl('BIGSERIAL PRIMARY KEY') }]);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    async append(schedulerId, reportId, body, now) {
      await inTransaction(pool, async (c) => {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`fairway-reports:${schedulerId}`]);
        await c.query(SQL.append, [schedulerId, reportId, body, now]);
      });
    },
    async read(schedulerId, after, max) {
      return (await pool.query<{ seq: string; body: string }>(SQL.read, [schedulerId, after, max])).rows.map(
        toRow,
      );
    },
    async ack(schedulerId, upTo) {
      await pool.query(SQL.ack, [schedulerId, upTo]);
    },
    async acked(schedulerId) {
      return Number((await pool.query<{ acked: string }>(SQL.acked, [schedulerId])).rows[0]?.acked ?? 0);
    },
    async prune(schedulerId, before) {
      return (await pool.query(SQL.prune, [schedulerId, before, schedulerId])).rowCount ?? 0;
    },
    async close() {
      await pool.end();
    },
  };
}

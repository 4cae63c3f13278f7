import type Database from 'better-sqlite3';
import { openSqliteFile } from '../engine/sqlite';
import { REPORT_SQL, reportLogDdl, toRow } from './report-log';
import type { ReportLog } from './report-log';

/** The report log in the SQLite file `filePath`: the workers of one host share it (writes are serialised). */
export function openSqliteReportLog(filePath: string): ReportLog {
  const db = openSqliteFile(filePath);
  db.exec(reportLogDdl('INTEGER PRIMARY KEY AUTOINCREMENT'));
  const q = Object.fromEntries(Object.entries(REPORT_SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Record<
    keyof typeof REPORT_SQL,
    Database.Statement
  >;
  return {
    async append(schedulerId, reportId, body, now) {
      q.append.run(schedulerId, reportId, body, now);
    },
    async read(schedulerId, after, max) {
      return (q.read.all(schedulerId, after, max) as { seq: number; body: string }[]).map(toRow);
    },
    async ack(schedulerId, upTo) {
      q.ack.run(schedulerId, upTo);
    },
    async acked(schedulerId) {
      return Number((q.acked.get(schedulerId) as { acked: number } | undefined)?.acked ?? 0);
    },
    async prune(schedulerId, before) {
      return q.prune.run(schedulerId, before, schedulerId).changes;
    },
    async close() {
      db.close();
    },
  };
}

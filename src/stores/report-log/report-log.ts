/**
 * The durable path of worker reports to the scheduler: a worker appends each report (releases,
 * charges, renewals, model observations) under its id, and the scheduler pulls them in order with
 * one activity at a time, whatever the number of workers. A report is booked by the scheduler chain
 * that pulls it; the cursor a pull is given acknowledges everything up to it, so a chain started
 * without a cursor (a recovery) begins where the last one acknowledged.
 */
export interface ReportRow {
  /** Its place in the scheduler's log: increasing in commit order. */
  seq: number;
  /** The report as the worker wrote it (JSON text). */
  body: string;
}

export interface ReportLog {
  /**
   * Appends `body` for scheduler `schedulerId` under `reportId` (unique per report). An id appended
   * before is not appended again (a retried append whose answer was lost); resolves once durable.
   */
  append(schedulerId: string, reportId: string, body: string, now: number): Promise<void>;
  /** Up to `max` rows past `after`, oldest first. */
  read(schedulerId: string, after: number, max: number): Promise<ReportRow[]>;
  /** Records that the scheduler booked every row up to `upTo` (never moves back). */
  ack(schedulerId: string, upTo: number): Promise<void>;
  /** Where a reader without a cursor begins: the last acknowledged place (0: none). */
  acked(schedulerId: string): Promise<number>;
  /** Deletes acknowledged rows written before `before` (a chain reset to an older cursor reads the rest). */
  prune(schedulerId: string, before: number): Promise<number>;
  close(): Promise<void>;
}

/** The schema, the same for both engines but for the sequence's type. */
export function reportLogDdl(seq: 'INTEGER PRIMARY KEY AUTOINCREMENT' | 'BIGSERIAL PRIMARY KEY'): string {
  return `
  CREATE TABLE IF NOT EXISTS scheduler_reports (
    seq          ${seq},
    scheduler_id TEXT NOT NULL,
    report_id    TEXT NOT NULL UNIQUE,
    body         TEXT NOT NULL,
    created_at   BIGINT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS scheduler_reports_by_scheduler ON scheduler_reports (scheduler_id, seq);
  CREATE TABLE IF NOT EXISTS scheduler_report_cursors (
    scheduler_id TEXT PRIMARY KEY,
    acked        BIGINT NOT NULL
  );
`;
}

/** The statements both engines share, with `?` placeholders. */
export const REPORT_SQL = {
  append:
    'INSERT INTO scheduler_reports (scheduler_id, report_id, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (report_id) DO NOTHING',
  ack: 'INSERT INTO scheduler_report_cursors (scheduler_id, acked) VALUES (?, ?) ON CONFLICT (scheduler_id) DO UPDATE SET acked = CASE WHEN excluded.acked > scheduler_report_cursors.acked THEN excluded.acked ELSE scheduler_report_cursors.acked END',
  acked: 'SELECT acked FROM scheduler_report_cursors WHERE scheduler_id = ?',
  read: 'SELECT seq, body FROM scheduler_reports WHERE scheduler_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  prune:
    'DELETE FROM scheduler_reports WHERE scheduler_id = ? AND created_at < ? AND seq <= COALESCE((SELECT acked FROM scheduler_report_cursors WHERE scheduler_id = ?), 0)',
} as const;

/** A row as read, its sequence a number (PostgreSQL answers BIGINT as text). */
export const toRow = (r: { seq: number | string; body: string }): ReportRow => ({
  seq: Number(r.seq),
  body: r.body,
});

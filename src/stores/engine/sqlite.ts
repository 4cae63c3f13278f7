import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Waits this long for another connection's write lock (the processes of a host share a file). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens a SQLite file the way every Fairway store does (its directory created; `:memory:` works too):
 * WAL and a busy timeout so the processes of a host can share it, and `synchronous = NORMAL`, so a
 * committed row survives the process dying (SIGKILL) without an fsync per write blocking the event
 * loop; a host losing power may lose the last rows (PostgreSQL, `DATABASE_URL`, for that).
 */
export function openSqliteFile(filePath: string): Database.Database {
  if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true });
  const db = new Database(filePath, { timeout: SQLITE_BUSY_TIMEOUT_MS });
  db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

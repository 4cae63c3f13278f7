import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** The body of `GET /v1/admin/effects/summary`. */
export interface EffectSummary {
  /** Keys applied. */
  effects: number;
  /** Every `apply` call, deduplicated ones included. */
  attempts: number;
  /** Keys applied more than once; anything but 0 is a bug. */
  duplicates: number;
}

/** An idempotent effect sink: each key takes effect once, however often it is attempted. */
export interface EffectStore {
  /** Applies `payload` under `key` unless that key was applied before; `applied` says which. */
  apply(key: string, payload: object): { applied: boolean };
  summary(): EffectSummary;
  close(): void;
}

/** Waits this long for another connection's write lock before failing (processes share the file). */
const BUSY_TIMEOUT_MS = 5000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS effects (
    key TEXT PRIMARY KEY,
    payload TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  );
  -- Append-only log of every attempt. It has no uniqueness of its own, so a
  -- failure of the guard on effects.key would show here as a key applied twice.
  CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    applied INTEGER NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS attempts_applied_key ON attempts (key) WHERE applied = 1;
`;

/**
 * Opens (creating file and directory as needed) the SQLite effect store at
 * `filePath`. WAL and a busy timeout let several processes share one file.
 */
export function openEffectStore(filePath: string): EffectStore {
  if (filePath !== ':memory:') mkdirSync(dirname(filePath), { recursive: true });
  const db = new Database(filePath, { timeout: BUSY_TIMEOUT_MS });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);

  const insertEffect = db.prepare(
    'INSERT OR IGNORE INTO effects (key, payload, applied_at) VALUES (?, ?, ?)',
  );
  const logAttempt = db.prepare('INSERT INTO attempts (key, applied, at) VALUES (?, ?, ?)');
  const count = (sql: string): number => (db.prepare(sql).pluck().get() as number | undefined) ?? 0;

  const applyTx = db.transaction((key: string, payload: string): boolean => {
    const now = Date.now();
    const applied = insertEffect.run(key, payload, now).changes === 1;
    logAttempt.run(key, applied ? 1 : 0, now);
    return applied;
  });

  return {
    apply(key, payload) {
      // IMMEDIATE takes the write lock up front, so two processes queue on busy_timeout instead of
      // failing to upgrade a read lock mid-transaction.
      return { applied: applyTx.immediate(key, JSON.stringify(payload)) };
    },
    summary() {
      return db.transaction(() => ({
        effects: count('SELECT count(*) FROM effects'),
        attempts: count('SELECT count(*) FROM attempts'),
        duplicates: count(
          'SELECT count(*) FROM (SELECT key FROM attempts WHERE applied = 1 GROUP BY key HAVING count(*) > 1)',
        ),
      }))();
    },
    close() {
      db.close();
    },
  };
}

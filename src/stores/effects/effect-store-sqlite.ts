import { openSqliteFile } from '../engine/sqlite';
import { deliveryOf, HOLD_SQL, SUMMARY_SQL } from './effect-store';
import type { DeliveryRow } from './effect-store';
import type { EffectStore } from './effect-store';

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

/** The SQLite effect store in `filePath` (created with its directory as needed; WAL and a busy timeout let processes share it). */
export function openSqliteEffectStore(filePath: string): EffectStore {
  const db = openSqliteFile(filePath);
  db.exec(SCHEMA);
  // Migration 2: when the effect's delivery was confirmed (files from before it lack the column).
  const columns = db.prepare("SELECT name FROM pragma_table_info('effects')").pluck().all() as string[];
  if (!columns.includes('delivered_at')) db.exec('ALTER TABLE effects ADD COLUMN delivered_at INTEGER');
  // Migration 3: what the delivery returned (a user's effect function's JSON result).
  if (!columns.includes('result')) db.exec('ALTER TABLE effects ADD COLUMN result TEXT');
  // Migration 4: which attempt may act on an undelivered effect, and until when.
  if (!columns.includes('held_by')) db.exec('ALTER TABLE effects ADD COLUMN held_by TEXT');
  if (!columns.includes('held_until')) db.exec('ALTER TABLE effects ADD COLUMN held_until INTEGER');

  const insertEffect = db.prepare(
    'INSERT OR IGNORE INTO effects (key, payload, applied_at) VALUES (?, ?, ?)',
  );
  const deliveredAt = db.prepare('SELECT delivered_at, result FROM effects WHERE key = ?');
  const setDelivered = db.prepare(
    'UPDATE effects SET delivered_at = ?, result = ? WHERE key = ? AND delivered_at IS NULL',
  );
  const takeHold = db.prepare(HOLD_SQL.take);
  const holdState = db.prepare(HOLD_SQL.state);
  const releaseHold = db.prepare(HOLD_SQL.release);
  const logAttempt = db.prepare('INSERT INTO attempts (key, applied, at) VALUES (?, ?, ?)');
  const count = (sql: string): number => (db.prepare(sql).pluck().get() as number | undefined) ?? 0;

  const applyTx = db.transaction((key: string, payload: string) => {
    const now = Date.now();
    const applied = insertEffect.run(key, payload, now).changes === 1;
    logAttempt.run(key, applied ? 1 : 0, now);
    if (applied) return { applied, delivered: false };
    return { applied, ...deliveryOf(deliveredAt.get(key) as DeliveryRow | undefined) };
  });

  return {
    async apply(key, payload) {
      // IMMEDIATE takes the write lock up front, so two processes queue on busy_timeout instead of
      // failing to upgrade a read lock mid-transaction.
      return applyTx.immediate(key, JSON.stringify(payload));
    },
    async markDelivered(key, result) {
      setDelivered.run(Date.now(), result ?? null, key);
    },
    async delivery(key) {
      return deliveryOf(deliveredAt.get(key) as DeliveryRow | undefined);
    },
    async hold(key, holder, until, now) {
      if (takeHold.run(holder, until, key, holder, now).changes === 1) return 'held';
      const row = holdState.get(key) as { delivered_at: number | null } | undefined;
      return row?.delivered_at != null ? 'delivered' : 'busy';
    },
    async release(key, holder) {
      releaseHold.run(key, holder);
    },
    async summary() {
      return db.transaction(() => ({
        effects: count(SUMMARY_SQL.effects),
        attempts: count(SUMMARY_SQL.attempts),
        duplicates: count(SUMMARY_SQL.duplicates),
      }))();
    },
    async close() {
      db.close();
    },
  };
}

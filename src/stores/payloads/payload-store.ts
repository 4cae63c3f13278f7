/**
 * Blobs too large for a Temporal payload (long conversations, completions), by content key: the
 * claim-check codec (src/fleet/claim-check.ts) puts them here and leaves a reference in history.
 * Every process that encodes or decodes payloads opens it at the same location (`DATABASE_URL`, or
 * a SQLite file in `DATA_DIR` shared by the processes of one host), as they do the other stores.
 *
 * Retention: each payload remembers when it was last written or read (`used_at`, refreshed at most
 * every TOUCH_EVERY_MS); `prune` deletes those unused since a time (PAYLOAD_RETENTION_DAYS).
 */
export interface PayloadStore {
  /** Stores `data` under `key` (a hash of it): writing a key twice keeps the first, equal, bytes and marks it used. */
  put(key: string, data: Uint8Array, now?: number): Promise<void>;
  /** The bytes under `key`, or null when there are none; marks it used. */
  get(key: string, now?: number): Promise<Uint8Array | null>;
  /** Marks `key` used at `now` (no-op for a key not stored). */
  touch(key: string, now?: number): Promise<void>;
  /** Deletes up to `limit` payloads neither written nor read since `before`; how many it deleted. */
  prune(before: number, limit?: number): Promise<number>;
  close(): Promise<void>;
}

/** A read marks its payload used again only when the mark is older than this (a write each read otherwise). */
export const TOUCH_EVERY_MS = 3600_000;
/** Payloads one prune statement deletes at most. */
export const PRUNE_BATCH = 500;

export const PAYLOADS_DDL = `CREATE TABLE IF NOT EXISTS payloads (
  key TEXT PRIMARY KEY,
  data BLOB NOT NULL,
  size INTEGER NOT NULL,
  created_at BIGINT NOT NULL
)`;

/** The column retention reads (added to stores created before it; null there: `created_at` counts). */
export const PAYLOADS_USED_AT = 'ALTER TABLE payloads ADD COLUMN used_at BIGINT';

export const PAYLOAD_SQL = {
  // A key written again is marked used as a read is: at most every TOUCH_EVERY_MS (no row rewrite each time).
  put: `INSERT INTO payloads (key, data, size, created_at, used_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET used_at = excluded.used_at
    WHERE COALESCE(payloads.used_at, payloads.created_at) <= excluded.used_at - ${TOUCH_EVERY_MS}`,
  get: 'SELECT data, COALESCE(used_at, created_at) AS used_at FROM payloads WHERE key = ?',
  touch: 'UPDATE payloads SET used_at = ? WHERE key = ?',
  prune: `DELETE FROM payloads WHERE key IN
    (SELECT key FROM payloads WHERE COALESCE(used_at, created_at) < ? LIMIT ?)`,
};

/**
 * Blobs too large for a Temporal payload (long conversations, completions), by content key: the
 * claim-check codec (src/fleet/claim-check.ts) puts them here and leaves a reference in history.
 * Every process that encodes or decodes payloads opens it at the same location (`DATABASE_URL`, or
 * a SQLite file in `DATA_DIR` shared by the processes of one host), as they do the other stores.
 */
export interface PayloadStore {
  /** Stores `data` under `key` (a hash of it): writing a key twice keeps the first, equal, bytes. */
  put(key: string, data: Uint8Array, now?: number): Promise<void>;
  /** The bytes under `key`, or null when there are none. */
  get(key: string): Promise<Uint8Array | null>;
  close(): Promise<void>;
}

export const PAYLOADS_DDL = `CREATE TABLE IF NOT EXISTS payloads (
  key TEXT PRIMARY KEY,
  data BLOB NOT NULL,
  size INTEGER NOT NULL,
  created_at BIGINT NOT NULL
)`;

export const PAYLOAD_SQL = {
  put: 'INSERT INTO payloads (key, data, size, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING',
  get: 'SELECT data FROM payloads WHERE key = ?',
};

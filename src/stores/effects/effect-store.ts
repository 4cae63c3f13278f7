/** The body of `GET /v1/admin/effects/summary`. */
export interface EffectSummary {
  /** Keys applied. */
  effects: number;
  /** Every `apply` call, deduplicated ones included. */
  attempts: number;
  /** Keys applied more than once; anything but 0 is a bug. */
  duplicates: number;
}

/**
 * An idempotent effect sink: each key takes effect once, however often it is attempted. Two
 * implementations: a SQLite file (one host) and PostgreSQL (`DATABASE_URL`, any number of hosts).
 */
export interface EffectStore {
  /**
   * Applies `payload` under `key` unless that key was applied before; `applied` says which, and
   * `delivered` whether the effect's external delivery was already confirmed (`markDelivered`), with
   * the result recorded then (JSON text), if any.
   */
  apply(key: string, payload: object): Promise<{ applied: boolean; delivered: boolean; result?: string }>;
  /**
   * Records that the effect under `key` reached the outside world, with what its delivery returned
   * (JSON text). The first record stands: a later one changes neither.
   */
  markDelivered(key: string, result?: string): Promise<void>;
  summary(): Promise<EffectSummary>;
  close(): Promise<void>;
}

/** The summary's counts, the same SQL for both engines. */
export const SUMMARY_SQL = {
  effects: 'SELECT count(*) AS n FROM effects',
  attempts: 'SELECT count(*) AS n FROM attempts',
  duplicates:
    'SELECT count(*) AS n FROM (SELECT key FROM attempts WHERE applied = 1 GROUP BY key HAVING count(*) > 1) d',
};

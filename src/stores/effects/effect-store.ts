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
  /** Whether the effect under `key` was delivered, and its recorded result; reads only (no attempt is logged). */
  delivery(key: string): Promise<{ delivered: boolean; result?: string }>;
  /**
   * Takes or renews `holder`'s hold on the undelivered effect `key` until `until`: `held` when it is
   * `holder`'s (free, its own, or another's lapsed before `now`), `busy` while another attempt holds
   * it, `delivered` once it was delivered (nothing to hold). An attempt acts only while it holds.
   */
  hold(key: string, holder: string, until: number, now: number): Promise<EffectHold>;
  /** Gives `holder`'s hold on `key` back (no-op when it holds none). */
  release(key: string, holder: string): Promise<void>;
  summary(): Promise<EffectSummary>;
  close(): Promise<void>;
}

export type EffectHold = 'held' | 'busy' | 'delivered';

/** An effect row's delivery columns, as both engines read them. */
export interface DeliveryRow {
  delivered_at: number | string | null;
  result: string | null;
}

/** What a row says of the delivery: delivered or not, and the result recorded with it. */
export function deliveryOf(row: DeliveryRow | undefined): { delivered: boolean; result?: string } {
  const delivered = row?.delivered_at != null;
  return { delivered, ...(delivered && row?.result != null ? { result: row.result } : {}) };
}

/** The hold's statements, the same for both engines (`?` placeholders). */
export const HOLD_SQL = {
  take: `UPDATE effects SET held_by = ?, held_until = ?
    WHERE key = ? AND delivered_at IS NULL AND (held_by IS NULL OR held_by = ? OR held_until < ?)`,
  state: 'SELECT delivered_at FROM effects WHERE key = ?',
  release: 'UPDATE effects SET held_by = NULL, held_until = NULL WHERE key = ? AND held_by = ?',
};

/** The summary's counts, the same SQL for both engines. */
export const SUMMARY_SQL = {
  effects: 'SELECT count(*) AS n FROM effects',
  attempts: 'SELECT count(*) AS n FROM attempts',
  duplicates:
    'SELECT count(*) AS n FROM (SELECT key FROM attempts WHERE applied = 1 GROUP BY key HAVING count(*) > 1) d',
};

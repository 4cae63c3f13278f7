import type { SettingsPatch } from '../../contract/scheduler-messages';

/** The drain the operator asked for: its intake, or `null` when the fleet is open. */
export type StoredDrain = 'refuse' | 'hold' | null;

/**
 * What the operator set on the scheduler at runtime, kept outside the chain: the drain (with its
 * intake) and every settings patch merged. A new chain starts from it (`SchedulerInput.operator`),
 * so losing the scheduler undoes neither.
 */
export interface SchedulerOperatorState {
  drain: StoredDrain;
  settings: SettingsPatch;
  /** When it last changed (ms since the epoch); 0 when never. */
  updatedAt: number;
}

export const EMPTY_OPERATOR_STATE: SchedulerOperatorState = { drain: null, settings: {}, updatedAt: 0 };

/** `b` applied over `a`, field by field (floors and lanes' wait bounds too). */
export function mergeSettingsPatch(a: SettingsPatch, b: SettingsPatch): SettingsPatch {
  const out: SettingsPatch = { ...a, ...b };
  if (a.floors || b.floors) out.floors = { ...a.floors, ...b.floors };
  if (a.maxWaitSeconds || b.maxWaitSeconds) out.maxWaitSeconds = { ...a.maxWaitSeconds, ...b.maxWaitSeconds };
  return out;
}

/**
 * The scheduler's operator state. One row, in the API store's database (the same SQLite file, or the
 * same PostgreSQL database, that every API process shares). Written by the API before it answers a
 * drain, resume or settings patch; read by whoever starts a scheduler chain.
 */
export interface SchedulerStateStore {
  get(): Promise<SchedulerOperatorState>;
  /** Records a drain (`'refuse'`/`'hold'`) or a resume (`null`). */
  setDrain(drain: StoredDrain, now: number): Promise<void>;
  /** Merges `patch` into the stored settings. */
  patchSettings(patch: SettingsPatch, now: number): Promise<void>;
  close(): Promise<void>;
}

/** One table, the same for both engines: a single row (id 1), the settings as JSON text. */
export const SCHEDULER_STATE_DDL = `
  CREATE TABLE IF NOT EXISTS scheduler_state (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    drain      TEXT CHECK (drain IN ('refuse', 'hold')),
    settings   TEXT NOT NULL,
    updated_at BIGINT NOT NULL
  );
`;

/** A stored row as its engine returns it. */
export interface SchedulerStateRow {
  drain: string | null;
  settings: string;
  updated_at: number | string;
}

/** The state of a row (or the empty state without one); a malformed settings text reads as none. */
export function stateOfRow(row: SchedulerStateRow | undefined): SchedulerOperatorState {
  if (!row) return { ...EMPTY_OPERATOR_STATE, settings: {} };
  let settings: SettingsPatch = {};
  try {
    const parsed = JSON.parse(row.settings) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      settings = parsed as SettingsPatch;
  } catch {
    settings = {};
  }
  const drain = row.drain === 'refuse' || row.drain === 'hold' ? row.drain : null;
  return { drain, settings, updatedAt: Number(row.updated_at) };
}

/** The upserts, `?` placeholders (numbered for PostgreSQL by its store). */
export const SCHEDULER_STATE_SQL = {
  get: 'SELECT drain, settings, updated_at FROM scheduler_state WHERE id = 1',
  upsert: `INSERT INTO scheduler_state (id, drain, settings, updated_at) VALUES (1, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET drain = excluded.drain, settings = excluded.settings,
           updated_at = excluded.updated_at`,
};

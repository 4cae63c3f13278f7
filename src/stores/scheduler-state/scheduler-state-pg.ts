import { inTransaction, migrate, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
import { withDbUnavailableAs503 } from '../api/api-store-pg';
import { mergeSettingsPatch, SCHEDULER_STATE_DDL, SCHEDULER_STATE_SQL, stateOfRow } from './scheduler-state';
import type { SchedulerOperatorState, SchedulerStateRow, SchedulerStateStore } from './scheduler-state';

const MIGRATIONS: Migration[] = [{ version: 1, sql: SCHEDULER_STATE_DDL }];
const SQL = numberedSql(SCHEDULER_STATE_SQL);

/** The scheduler's operator state in PostgreSQL (the API store's database, shared by every host). */
export async function openPgSchedulerState(url: string): Promise<SchedulerStateStore> {
  const pool = openPool(url, 2);
  try {
    await migrate(pool, 'scheduler_state', MIGRATIONS);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const write = (change: (s: SchedulerOperatorState) => SchedulerOperatorState, now: number) =>
    inTransaction(pool, async (c) => {
      // One writer at a time: two patches at once both land.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['fairway-scheduler-state']);
      const next = change(stateOfRow((await c.query<SchedulerStateRow>(SQL.get)).rows[0]));
      await c.query(SQL.upsert, [next.drain, JSON.stringify(next.settings), now]);
    });
  return withDbUnavailableAs503<SchedulerStateStore>({
    async get() {
      return stateOfRow((await pool.query<SchedulerStateRow>(SQL.get)).rows[0]);
    },
    async setDrain(drain, now) {
      await write((s) => ({ ...s, drain }), now);
    },
    async patchSettings(patch, now) {
      await write((s) => ({ ...s, settings: mergeSettingsPatch(s.settings, patch) }), now);
    },
    close: () => pool.end(),
  });
}

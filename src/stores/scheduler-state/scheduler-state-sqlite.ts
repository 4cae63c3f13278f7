import { openSqliteFile } from '../engine/sqlite';
import { mergeSettingsPatch, SCHEDULER_STATE_DDL, SCHEDULER_STATE_SQL, stateOfRow } from './scheduler-state';
import type { SchedulerOperatorState, SchedulerStateRow, SchedulerStateStore } from './scheduler-state';

/**
 * The scheduler's operator state in a SQLite file (the API store's own file: every process of the
 * host shares it). Its table stands apart from the API store's versioned schema (`IF NOT EXISTS`).
 */
export function openSqliteSchedulerState(filePath: string): SchedulerStateStore {
  const db = openSqliteFile(filePath);
  db.exec(SCHEDULER_STATE_DDL);
  const get = db.prepare<[], SchedulerStateRow>(SCHEDULER_STATE_SQL.get);
  const upsert = db.prepare(SCHEDULER_STATE_SQL.upsert);
  const write = (change: (s: SchedulerOperatorState) => SchedulerOperatorState, now: number) =>
    db
      .transaction(() => {
        const next = change(stateOfRow(get.get()));
        upsert.run(next.drain, JSON.stringify(next.settings), now);
      })
      .immediate();
  return {
    async get() {
      return stateOfRow(get.get());
    },
    async setDrain(drain, now) {
      write((s) => ({ ...s, drain }), now);
    },
    async patchSettings(patch, now) {
      write((s) => ({ ...s, settings: mergeSettingsPatch(s.settings, patch) }), now);
    },
    async close() {
      db.close();
    },
  };
}

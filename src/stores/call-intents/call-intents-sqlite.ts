import type Database from 'better-sqlite3';
import { openSqliteFile } from '../engine/sqlite';
import {
  CALL_INTENTS_DDL,
  CALL_SQL,
  PROVISIONAL_COLUMNS,
  PROVISIONAL_INDEX,
  RUN_INDEX,
  claimOrphansSql,
  toOrphan,
  toProvisional,
  toRecorded,
} from './call-intents';
import type { CallIntentStore, OrphanRow } from './call-intents';

/** The SQLite call intent store in `filePath` (created with its directory as needed). */
export function openSqliteCallIntents(filePath: string): CallIntentStore {
  // A committed row survives the process dying (SIGKILL), which is what it is for (see openSqliteFile).
  const db = openSqliteFile(filePath);
  db.exec(CALL_INTENTS_DDL);
  // A file from before provisional charges gains their columns.
  const columns = new Set(
    (db.prepare('PRAGMA table_info(call_intents)').all() as { name: string }[]).map((c) => c.name),
  );
  if (!columns.has('provisional'))
    db.transaction(() => PROVISIONAL_COLUMNS.forEach((a) => db.exec(a))).immediate();
  db.exec(PROVISIONAL_INDEX);
  db.exec(RUN_INDEX);
  const q = Object.fromEntries(Object.entries(CALL_SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Record<
    keyof typeof CALL_SQL,
    Database.Statement
  >;
  const settleOne = db.prepare('UPDATE call_intents SET settled_at = ? WHERE key = ? AND settled_at IS NULL');
  // One statement under the write lock: two sweepers cannot both take a row.
  const claim = db.prepare(claimOrphansSql(''));
  const settleTx = db.transaction((keys: readonly string[], now: number) => {
    for (const k of keys) settleOne.run(now, k);
  });
  const reconcileOne = db.prepare(
    'UPDATE call_intents SET reconciled_at = ? WHERE key = ? AND reconciled_at IS NULL',
  );
  const reconcileTx = db.transaction((keys: readonly string[], now: number) => {
    for (const k of keys) reconcileOne.run(now, k);
  });
  const count = (s: Database.Statement) => Number((s.get() as { n: number } | undefined)?.n ?? 0);

  return {
    async begin(i, now) {
      q.begin.run(i.key, i.tenant, i.runId, i.attempt, i.reserved, i.owner, now);
    },
    async billed(key, tokens) {
      q.billed.run(tokens, key);
    },
    async callsOf(runId, attempt, keyPrefix) {
      const rows = q.callsOf.all(runId, attempt, keyPrefix.length, keyPrefix) as OrphanRow[];
      return rows.map(toRecorded);
    },
    async drop(key) {
      q.drop.run(key);
    },
    async settle(keys, now) {
      if (keys.length) settleTx.immediate(keys, now);
    },
    async provisional(key) {
      q.provisional.run(key);
    },
    async dueForReconcile(owner, madeBefore, limit) {
      return (q.dueForReconcile.all(owner, madeBefore, limit) as OrphanRow[]).map(toProvisional);
    },
    async reconciled(keys, now) {
      if (keys.length) reconcileTx.immediate(keys, now);
    },
    async beat(owner, now) {
      q.beat.run(owner, now);
    },
    async claimOrphans(owner, deadBefore, limit) {
      return (claim.all(owner, owner, deadBefore, limit) as OrphanRow[]).map(toOrphan);
    },
    async prune(settledBefore, deadBefore, keepProvisional = true) {
      q.pruneSettled.run(settledBefore, keepProvisional ? 1 : 0);
      q.pruneOwners.run(deadBefore);
    },
    async counts() {
      return db.transaction(() => ({ rows: count(q.rows), unsettled: count(q.unsettled) }))();
    },
    async close() {
      db.close();
    },
  };
}

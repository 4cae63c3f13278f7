import type Database from 'better-sqlite3';
import { openSqliteFile } from '../engine/sqlite';
import {
  CALL_INTENTS_DDL,
  CALL_SQL,
  FENCE_COLUMNS,
  PROVISIONAL_COLUMNS,
  PROVISIONAL_INDEX,
  RUN_INDEX,
  TakerFenced,
  beginSql,
  billOnceBy,
  takeOverEach,
  takerSql,
  toOrphan,
  toProvisional,
  toRecorded,
} from './call-intents';
import type { CallIntentStore, OrphanRow, OrphanedCall } from './call-intents';

const columnsOf = (db: Database.Database, table: string) =>
  new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));

/** The SQLite call intent store in `filePath` (created with its directory as needed). */
export function openSqliteCallIntents(filePath: string): CallIntentStore {
  // A committed row survives the process dying (SIGKILL), which is what it is for (see openSqliteFile).
  const db = openSqliteFile(filePath);
  db.exec(CALL_INTENTS_DDL);
  // A file from before provisional charges, or before fencing, gains their columns.
  if (!columnsOf(db, 'call_intents').has('provisional'))
    db.transaction(() => PROVISIONAL_COLUMNS.forEach((a) => db.exec(a))).immediate();
  if (!columnsOf(db, 'call_owners').has('fenced_at'))
    db.transaction(() => FENCE_COLUMNS.forEach((a) => db.exec(a))).immediate();
  db.exec(PROVISIONAL_INDEX);
  db.exec(RUN_INDEX);
  const q = Object.fromEntries(Object.entries(CALL_SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Record<
    keyof typeof CALL_SQL,
    Database.Statement
  >;
  const begin = db.prepare(beginSql(''));
  const taker = db.prepare(takerSql(''));
  const eachOwn = (sql: string) => {
    const one = db.prepare(sql);
    return db.transaction((keys: readonly string[], owner: string, now: number) =>
      keys.filter((k) => one.run(now, k, owner).changes > 0),
    );
  };
  const settleTx = eachOwn(
    'UPDATE call_intents SET settled_at = COALESCE(settled_at, ?) WHERE key = ? AND owner = ?',
  );
  const reconcileTx = eachOwn(
    'UPDATE call_intents SET reconciled_at = COALESCE(reconciled_at, ?) WHERE key = ? AND owner = ?',
  );
  // Under the write lock: an owner is fenced with all its rows taken, or not at all.
  const takeOverTx = db.transaction(
    (by: string, owner: string, deadBefore: number, now: number): OrphanedCall[] | null => {
      if (taker.get(by) === undefined) throw new TakerFenced(by);
      if (q.fence.get(owner, now, deadBefore) === undefined) return null;
      return (q.takeOver.all(by, owner) as OrphanRow[]).map(toOrphan);
    },
  );
  const billOnceTx = db.transaction(
    (key: string, by: { owner: string } | { madeBy: string }, tokens: number) => {
      const { who, record, read } = billOnceBy(by);
      q[record].run(tokens, key, who);
      const row = q[read].get(key, who) as { tokens: number | null } | undefined;
      return row?.tokens ?? undefined;
    },
  );
  const count = (s: Database.Statement) => Number((s.get() as { n: number } | undefined)?.n ?? 0);

  return {
    async begin(i, now) {
      return begin.run(i.key, i.tenant, i.runId, i.attempt, i.reserved, now, i.owner).changes > 0;
    },
    async billed(key, owner, tokens) {
      return q.billed.run(tokens, key, owner).changes > 0;
    },
    async billOnce(key, by, tokens) {
      return billOnceTx.immediate(key, by, tokens);
    },
    async callsOf(runId, attempt, keyPrefix) {
      const rows = q.callsOf.all(runId, attempt, keyPrefix.length, keyPrefix) as OrphanRow[];
      return rows.map(toRecorded);
    },
    async drop(key, owner) {
      q.drop.run(key, owner);
    },
    async settle(keys, owner, now) {
      return keys.length ? settleTx.immediate(keys, owner, now) : [];
    },
    async provisional(key, owner) {
      return q.provisional.run(key, owner).changes > 0;
    },
    async dueForReconcile(owner, madeBefore, limit) {
      return (q.dueForReconcile.all(owner, madeBefore, limit) as OrphanRow[]).map(toProvisional);
    },
    async reconciled(keys, owner, now) {
      return keys.length ? reconcileTx.immediate(keys, owner, now) : [];
    },
    async join(owner, now) {
      q.join.run(owner, now);
    },
    async beat(owner, now) {
      return q.beat.run(now, owner).changes > 0;
    },
    async claimOrphans(by, deadBefore, now, maxOwners) {
      const dead = (q.deadOwners.all(by, deadBefore, maxOwners) as { owner: string }[]).map((r) => r.owner);
      return takeOverEach(dead, async (owner) => takeOverTx.immediate(by, owner, deadBefore, now));
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

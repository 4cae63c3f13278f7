import { migrate, numberedPlaceholders, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
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

const MIGRATIONS: Migration[] = [
  { version: 1, sql: CALL_INTENTS_DDL },
  {
    version: 2,
    sql: [
      ...PROVISIONAL_COLUMNS.map((a) => a.replace('ADD COLUMN', 'ADD COLUMN IF NOT EXISTS')),
      PROVISIONAL_INDEX,
    ]
      .map((x) => `${x};`)
      .join('\n'),
  },
  { version: 3, sql: `${RUN_INDEX};` },
];

const SQL = numberedSql(CALL_SQL);
// SKIP LOCKED: a row another sweeper is taking is left to it; a row it took meanwhile fails the
// re-checked condition (its owner is alive now) and is not taken twice.
const CLAIM = numberedPlaceholders(claimOrphansSql('FOR UPDATE SKIP LOCKED'));

/** The call intent store on PostgreSQL (`DATABASE_URL`): every worker on every host shares it. */
export async function openPgCallIntents(url: string): Promise<CallIntentStore> {
  const pool = openPool(url);
  try {
    await migrate(pool, 'call-intents', MIGRATIONS);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const count = async (sql: string) => Number((await pool.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
  return {
    async begin(i, now) {
      await pool.query(SQL.begin, [i.key, i.tenant, i.runId, i.attempt, i.reserved, i.owner, now]);
    },
    async billed(key, tokens) {
      await pool.query(SQL.billed, [tokens, key]);
    },
    async callsOf(runId, attempt, keyPrefix) {
      const r = await pool.query<OrphanRow>(SQL.callsOf, [runId, attempt, keyPrefix.length, keyPrefix]);
      return r.rows.map(toRecorded);
    },
    async drop(key) {
      await pool.query(SQL.drop, [key]);
    },
    async settle(keys, now) {
      if (!keys.length) return;
      await pool.query(
        'UPDATE call_intents SET settled_at = $1 WHERE key = ANY($2::text[]) AND settled_at IS NULL',
        [now, keys],
      );
    },
    async provisional(key) {
      await pool.query(SQL.provisional, [key]);
    },
    async dueForReconcile(owner, madeBefore, limit) {
      const r = await pool.query<OrphanRow>(SQL.dueForReconcile, [owner, madeBefore, limit]);
      return r.rows.map(toProvisional);
    },
    async reconciled(keys, now) {
      if (!keys.length) return;
      await pool.query(
        'UPDATE call_intents SET reconciled_at = $1 WHERE key = ANY($2::text[]) AND reconciled_at IS NULL',
        [now, keys],
      );
    },
    async beat(owner, now) {
      await pool.query(SQL.beat, [owner, now]);
    },
    async claimOrphans(owner, deadBefore, limit) {
      const r = await pool.query<OrphanRow>(CLAIM, [owner, owner, deadBefore, limit]);
      return r.rows.map(toOrphan);
    },
    async prune(settledBefore, deadBefore, keepProvisional = true) {
      await pool.query(SQL.pruneSettled, [settledBefore, keepProvisional ? 1 : 0]);
      await pool.query(SQL.pruneOwners, [deadBefore]);
    },
    async counts() {
      return { rows: await count(SQL.rows), unsettled: await count(SQL.unsettled) };
    },
    async close() {
      await pool.end();
    },
  };
}

import { inTransaction, migrate, numberedPlaceholders, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
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

const ifNotExists = (alters: string[]) =>
  alters.map((a) => a.replace('ADD COLUMN', 'ADD COLUMN IF NOT EXISTS'));

const MIGRATIONS: Migration[] = [
  { version: 1, sql: CALL_INTENTS_DDL },
  {
    version: 2,
    sql: [...ifNotExists(PROVISIONAL_COLUMNS), PROVISIONAL_INDEX].map((x) => `${x};`).join('\n'),
  },
  { version: 3, sql: `${RUN_INDEX};` },
  {
    version: 4,
    sql: ifNotExists(FENCE_COLUMNS)
      .map((x) => `${x};`)
      .join('\n'),
  },
];

const SQL = numberedSql(CALL_SQL);
// FOR SHARE on the owner's row: a fence (which locks it for update) waits for a call being recorded
// and then takes it, or the call waits for the fence and is not recorded.
const BEGIN = numberedPlaceholders(beginSql('FOR SHARE'));
const TAKER = numberedPlaceholders(takerSql('FOR SHARE'));

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
  const changed = async (sql: string, params: unknown[]) =>
    ((await pool.query(sql, params)).rowCount ?? 0) > 0;
  const eachOwn = async (column: string, keys: readonly string[], owner: string, now: number) => {
    if (!keys.length) return [];
    const r = await pool.query<{ key: string }>(
      `UPDATE call_intents SET ${column} = COALESCE(${column}, $1)
       WHERE key = ANY($2::text[]) AND owner = $3 RETURNING key`,
      [now, keys, owner],
    );
    return r.rows.map((x) => x.key);
  };
  // The fence locks the owner's row first: its `begin`s wait for the commit, then record nothing.
  const takeOver = (by: string, owner: string, deadBefore: number, now: number) =>
    inTransaction(pool, async (c): Promise<OrphanedCall[] | null> => {
      if (!(await c.query(TAKER, [by])).rowCount) throw new TakerFenced(by);
      if (!(await c.query(SQL.fence, [owner, now, deadBefore])).rowCount) return null;
      return (await c.query<OrphanRow>(SQL.takeOver, [by, owner])).rows.map(toOrphan);
    });
  return {
    async begin(i, now) {
      return changed(BEGIN, [i.key, i.tenant, i.runId, i.attempt, i.reserved, now, i.owner]);
    },
    async billed(key, owner, tokens) {
      return changed(SQL.billed, [tokens, key, owner]);
    },
    async billOnce(key, by, tokens) {
      const { who, record, read } = billOnceBy(by);
      // Under READ COMMITTED a concurrent first write is waited for, then read here.
      await pool.query(SQL[record], [tokens, key, who]);
      const row = (await pool.query<{ tokens: string | number | null }>(SQL[read], [key, who])).rows[0];
      return row?.tokens === null || row?.tokens === undefined ? undefined : Number(row.tokens);
    },
    async callsOf(runId, attempt, keyPrefix) {
      const r = await pool.query<OrphanRow>(SQL.callsOf, [runId, attempt, keyPrefix.length, keyPrefix]);
      return r.rows.map(toRecorded);
    },
    async drop(key, owner) {
      await pool.query(SQL.drop, [key, owner]);
    },
    settle: (keys, owner, now) => eachOwn('settled_at', keys, owner, now),
    async provisional(key, owner) {
      return changed(SQL.provisional, [key, owner]);
    },
    async dueForReconcile(owner, madeBefore, limit) {
      const r = await pool.query<OrphanRow>(SQL.dueForReconcile, [owner, madeBefore, limit]);
      return r.rows.map(toProvisional);
    },
    reconciled: (keys, owner, now) => eachOwn('reconciled_at', keys, owner, now),
    async join(owner, now) {
      await pool.query(SQL.join, [owner, now]);
    },
    async beat(owner, now) {
      return changed(SQL.beat, [now, owner]);
    },
    async claimOrphans(by, deadBefore, now, maxOwners) {
      const dead = await pool.query<{ owner: string }>(SQL.deadOwners, [by, deadBefore, maxOwners]);
      return takeOverEach(
        dead.rows.map((r) => r.owner),
        (owner) => takeOver(by, owner, deadBefore, now),
      );
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

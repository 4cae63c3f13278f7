import { inTransaction, migrate, numberedSql, openPool } from '../engine/pg';
import type { Migration } from '../engine/pg';
import {
  BATCH_ITEMS_DDL,
  BATCH_SQL,
  KEY_COLUMNS,
  decideAppend,
  joinKeys,
  pickItems,
  toStoredBatch,
} from './batch-items';
import type { AppendOutcome, BatchItemStore, BatchRow } from './batch-items';

const MIGRATIONS: Migration[] = [
  { version: 1, sql: BATCH_ITEMS_DDL },
  { version: 2, sql: KEY_COLUMNS.join(';\n') },
];

const SQL = numberedSql(BATCH_SQL);

/** The batch item store on PostgreSQL (`DATABASE_URL`): every API and worker on every host shares it. */
export async function openPgBatchItems(url: string): Promise<BatchItemStore> {
  const pool = openPool(url);
  try {
    await migrate(pool, 'batch-items', MIGRATIONS);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const get = async (batchId: string) => {
    const r = await pool.query<BatchRow>(SQL.get, [batchId]);
    return r.rows[0] ? toStoredBatch(r.rows[0]) : null;
  };
  return {
    async create(b) {
      await pool.query(SQL.insert, [
        b.batchId,
        b.tenant,
        b.agent,
        b.priority,
        b.tokensFloor,
        b.onBudgetExhausted,
        b.createdAt,
        b.fairnessKey ?? null,
      ]);
    },
    get,
    async countOpen(tenant, since) {
      const r = await pool.query<{ n: string }>(SQL.countOpen, [tenant, since]);
      return Number(r.rows[0]?.n ?? 0);
    },
    append: (batchId, part, maxItems) =>
      inTransaction(pool, async (c): Promise<AppendOutcome> => {
        // The batch's row lock serialises appends (and commits) of one batch across every process.
        const row = (await c.query<BatchRow>(`${SQL.get} FOR UPDATE`, [batchId])).rows[0];
        const batch = row ? toStoredBatch(row) : null;
        const seen = (
          await c.query<{ body_hash: string; first_index: number; count: number }>(SQL.seenPart, [
            batchId,
            part.part,
          ])
        ).rows[0];
        const decided = decideAppend(
          batch,
          seen ? { hash: seen.body_hash, firstIndex: seen.first_index, count: seen.count } : null,
          part,
          maxItems,
        );
        if (decided || !batch) return decided ?? { kind: 'missing' };
        const n = part.items.length;
        await c.query(SQL.insertPart, [
          batchId,
          part.part,
          part.hash,
          batch.items,
          n,
          JSON.stringify(part.items),
          part.fairnessKeys ? JSON.stringify(part.fairnessKeys) : null,
        ]);
        await c.query(SQL.grow, [n, part.estimateSum, batchId]);
        return { kind: 'appended', firstIndex: batch.items, count: n, total: batch.items + n };
      }),
    commit: (batchId) =>
      inTransaction(pool, async (c) => {
        await c.query(SQL.commit, [Date.now(), batchId]);
        const r = await c.query<BatchRow>(SQL.get, [batchId]);
        return r.rows[0] ? toStoredBatch(r.rows[0]) : null;
      }),
    async reopen(batchId) {
      await pool.query(SQL.reopen, [batchId]);
    },
    async markStarted(batchId) {
      await pool.query(SQL.markStarted, [batchId]);
    },
    async unstarted(before) {
      return (await pool.query<BatchRow>(SQL.unstarted, [before])).rows.map(toStoredBatch);
    },
    async readKeys(batchId) {
      const r = await pool.query<{ first_index: number; count: number; fairness_keys: string | null }>(
        SQL.partKeys,
        [batchId],
      );
      return joinKeys(r.rows);
    },
    async readItems(batchId, indexes) {
      if (indexes.length === 0) return [];
      const r = await pool.query<{ first_index: number; items: string | null }>(SQL.partsCovering, [
        batchId,
        Math.max(...indexes),
        Math.min(...indexes),
      ]);
      return pickItems(batchId, r.rows, indexes);
    },
    async dropItems(batchId) {
      await pool.query(SQL.dropItems, [batchId]);
    },
    purgeOpen: (before) =>
      inTransaction(pool, async (c) => {
        await c.query(SQL.purgeParts, [before]);
        return (await c.query(SQL.purgeBatches, [before])).rowCount ?? 0;
      }),
    close: () => pool.end(),
  };
}

import type Database from 'better-sqlite3';
import { openSqliteFile } from '../engine/sqlite';
import {
  BATCH_ITEMS_DDL,
  BATCH_SQL,
  KEY_COLUMNS,
  decideAppend,
  joinKeys,
  pickItems,
  toStoredBatch,
} from './batch-items';
import type { AppendOutcome, BatchItemStore, BatchPart, BatchRow, StoredBatch } from './batch-items';

/** The SQLite store in `filePath` (created with its directory; WAL and a busy timeout let processes share it). */
export function openSqliteBatchItems(filePath: string): BatchItemStore {
  const db = openSqliteFile(filePath);
  db.exec(BATCH_ITEMS_DDL);
  // A file from before fairness keys gains their columns.
  const columns = db.prepare("SELECT name FROM pragma_table_info('batches')").pluck().all() as string[];
  if (!columns.includes('fairness_key'))
    db.transaction(() => KEY_COLUMNS.forEach((a) => db.exec(a))).immediate();
  const q = Object.fromEntries(Object.entries(BATCH_SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Record<
    keyof typeof BATCH_SQL,
    Database.Statement
  >;
  const get = (batchId: string): StoredBatch | null => {
    const row = q.get.get(batchId) as BatchRow | undefined;
    return row ? toStoredBatch(row) : null;
  };
  const appendTx = db.transaction((batchId: string, part: BatchPart, maxItems: number): AppendOutcome => {
    const batch = get(batchId);
    const seen = q.seenPart.get(batchId, part.part) as
      { body_hash: string; first_index: number; count: number } | undefined;
    const decided = decideAppend(
      batch,
      seen ? { hash: seen.body_hash, firstIndex: seen.first_index, count: seen.count } : null,
      part,
      maxItems,
    );
    if (decided || !batch) return decided ?? { kind: 'missing' };
    const n = part.items.length;
    const keys = part.fairnessKeys ? JSON.stringify(part.fairnessKeys) : null;
    q.insertPart.run(batchId, part.part, part.hash, batch.items, n, JSON.stringify(part.items), keys);
    q.grow.run(n, part.estimateSum, batchId);
    return { kind: 'appended', firstIndex: batch.items, count: n, total: batch.items + n };
  });
  const commitTx = db.transaction((batchId: string) => {
    q.commit.run(Date.now(), batchId);
    return get(batchId);
  });
  const purgeTx = db.transaction((before: number) => {
    q.purgeParts.run(before);
    return q.purgeBatches.run(before).changes;
  });

  return {
    async create(b) {
      const row = [b.batchId, b.tenant, b.agent, b.priority, b.tokensFloor, b.onBudgetExhausted, b.createdAt];
      q.insert.run(...row, b.fairnessKey ?? null);
    },
    get: async (batchId) => get(batchId),
    async countOpen(tenant, since) {
      return (q.countOpen.get(tenant, since) as { n: number }).n;
    },
    // IMMEDIATE: the write lock up front, so concurrent appends (other processes too) queue, never interleave.
    append: async (batchId, part, maxItems) => appendTx.immediate(batchId, part, maxItems),
    commit: async (batchId) => commitTx.immediate(batchId),
    async reopen(batchId) {
      q.reopen.run(batchId);
    },
    async markStarted(batchId) {
      q.markStarted.run(batchId);
    },
    async unstarted(before) {
      return (q.unstarted.all(before) as BatchRow[]).map(toStoredBatch);
    },
    async readKeys(batchId) {
      return joinKeys(
        q.partKeys.all(batchId) as { first_index: number; count: number; fairness_keys: string | null }[],
      );
    },
    async readItems(batchId, indexes) {
      if (indexes.length === 0) return [];
      const parts = q.partsCovering.all(batchId, Math.max(...indexes), Math.min(...indexes)) as {
        first_index: number;
        items: string | null;
      }[];
      return pickItems(batchId, parts, indexes);
    },
    async dropItems(batchId) {
      q.dropItems.run(batchId);
    },
    purgeOpen: async (before) => purgeTx.immediate(before),
    async close() {
      db.close();
    },
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BatchItemStore, BatchPart, NewStoredBatch } from '../../../src/stores/batch-items/batch-items';
import { openBatchItems } from '../../../src/stores/open';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

let dir: string;
/** The same suite against both engines: a SQLite file and a PostgreSQL database. */
const engines = [sqliteEngine('batch-items.db', () => dir), postgresEngine()];

const batch = (batchId: string, createdAt = 1_000): NewStoredBatch => ({
  batchId,
  tenant: 'acme',
  agent: 'audit',
  priority: 'batch',
  tokensFloor: 0,
  onBudgetExhausted: 'fail',
  createdAt,
});
const items = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ targets: [`t-${from + i}`, 'x'.repeat(40)] }));
const part = (n: number, from: number, count: number): BatchPart => ({
  part: n,
  hash: `h-${n}-${from}-${count}`,
  items: items(from, count),
  estimateSum: 1000 * count,
});

/** Takes a store's tables back to their shape before fairness keys (and, on PostgreSQL, its migration record). */
async function asBeforeKeys(location: string): Promise<void> {
  const drop = [
    'ALTER TABLE batches DROP COLUMN fairness_key',
    'ALTER TABLE batch_parts DROP COLUMN fairness_keys',
  ];
  if (!location.startsWith('postgres')) {
    const db = new Database(location);
    for (const sql of drop) db.exec(sql);
    db.close();
    return;
  }
  const pool = new Pool({ connectionString: location });
  for (const sql of drop) await pool.query(sql);
  await pool.query("DELETE FROM fairway_migrations WHERE name = 'batch-items' AND version = 2");
  await pool.end();
}

describe.each(engines)('batch item store ($name)', (engine) => {
  const open: BatchItemStore[] = [];
  let store: BatchItemStore;
  /** Where `store` was opened: another handle there stands for another process. */
  let location: string;
  const openAt = async (location: string) => {
    const s = await openBatchItems(location);
    open.push(s);
    return s;
  };
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-batch-items-'));
    if (engine.skip) return;
    location = await engine.location();
    store = await openAt(location);
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(engine.skip)('appends parts in order, each once, and reads any items by index', async () => {
    await store.create(batch('b1'));
    expect(await store.append('b1', part(0, 0, 3), 100)).toEqual({
      kind: 'appended',
      firstIndex: 0,
      count: 3,
      total: 3,
    });
    expect(await store.append('b1', part(1, 3, 4), 100)).toMatchObject({ kind: 'appended', firstIndex: 3 });
    // The same part again (a retry whose answer was lost): where it went, nothing appended.
    expect(await store.append('b1', part(1, 3, 4), 100)).toEqual({
      kind: 'replayed',
      firstIndex: 3,
      count: 4,
      total: 7,
    });
    expect(await store.append('b1', { ...part(1, 3, 4), hash: 'other' }, 100)).toEqual({ kind: 'conflict' });
    expect(await store.append('b1', part(3, 7, 1), 100)).toEqual({ kind: 'out_of_order', expected: 2 });
    expect(await store.append('b1', part(2, 7, 94), 100)).toEqual({
      kind: 'too_many',
      total: 101,
      limit: 100,
    });
    expect(await store.append('nope', part(0, 0, 1), 100)).toEqual({ kind: 'missing' });
    expect(await store.get('b1')).toMatchObject({ items: 7, parts: 2, estimateSum: 7000, state: 'open' });
    expect(await store.readItems('b1', [6, 0, 3, 2])).toEqual([
      ...items(6, 1),
      ...items(0, 1),
      ...items(3, 1),
      ...items(2, 1),
    ]);
    await expect(store.readItems('b1', [7])).rejects.toThrow(/no stored item 7/);
  });

  it.skipIf(engine.skip)('appends a part sent twice at once exactly once', async () => {
    await store.create(batch('b2'));
    const other = await openAt(location);
    const outcomes = await Promise.all([
      store.append('b2', part(0, 0, 50), 1000),
      other.append('b2', part(0, 0, 50), 1000),
      store.append('b2', part(0, 0, 50), 1000),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['appended', 'replayed', 'replayed']);
    expect(await store.get('b2')).toMatchObject({ items: 50, parts: 1 });
  });

  it.skipIf(engine.skip)(
    'commit freezes the batch; reopen and start are recorded; items dropped after',
    async () => {
      await store.create(batch('b3'));
      await store.append('b3', part(0, 0, 2), 10);
      expect(await store.commit('b3')).toMatchObject({ state: 'committed', items: 2, started: false });
      expect(await store.append('b3', part(1, 2, 1), 10)).toEqual({ kind: 'committed' });
      // A retried part still learns where its items went.
      expect((await store.append('b3', part(0, 0, 2), 10)).kind).toBe('replayed');
      expect((await store.unstarted(Date.now() + 1)).map((b) => b.batchId)).toEqual(['b3']);
      await store.reopen('b3');
      expect(await store.get('b3')).toMatchObject({ state: 'open' });
      await store.commit('b3');
      await store.markStarted('b3');
      await store.reopen('b3'); // a started batch never opens again
      expect(await store.get('b3')).toMatchObject({ state: 'committed', started: true });
      expect(await store.unstarted(Date.now() + 1)).toEqual([]);
      await store.dropItems('b3');
      await expect(store.readItems('b3', [0])).rejects.toThrow(/no stored item/);
      expect(await store.commit('nope')).toBeNull();
    },
  );

  it.skipIf(engine.skip)('forgets open batches past their time, never committed ones', async () => {
    await store.create(batch('old', 1_000));
    await store.create(batch('done', 1_000));
    await store.create(batch('new', 5_000));
    await store.append('old', part(0, 0, 1), 10);
    await store.append('done', part(0, 0, 1), 10);
    await store.commit('done');
    expect(await store.countOpen('acme', 0)).toBe(2);
    expect(await store.purgeOpen(2_000)).toBe(1);
    expect(await store.get('old')).toBeNull();
    expect(await store.get('done')).not.toBeNull();
    expect(await store.countOpen('acme', 0)).toBe(1);
    expect(await store.countOpen('acme', 6_000)).toBe(0);
  });

  it.skipIf(engine.skip)(
    "keeps the batch's fairness key and each part's item keys, in index order",
    async () => {
      await store.create({ ...batch('k1'), fairnessKey: 'team-a' });
      await store.create(batch('k2'));
      await store.append('k1', { ...part(0, 0, 2), fairnessKeys: ['user-1', null] }, 10);
      await store.append('k1', part(1, 2, 1), 10);
      await store.append('k1', { ...part(2, 3, 2), fairnessKeys: [null, 'user-5'] }, 10);
      await store.append('k2', part(0, 0, 2), 10);
      expect(await store.get('k1')).toMatchObject({ fairnessKey: 'team-a', items: 5 });
      expect(await store.get('k2')).not.toHaveProperty('fairnessKey');
      const worker = await openAt(location);
      expect(await worker.readKeys('k1')).toEqual(['user-1', null, null, null, 'user-5']);
      expect(await worker.readKeys('k2')).toBeNull();
      expect(await worker.readItems('k1', [4])).toEqual(items(4, 1));
      await store.dropItems('k1');
      expect(await store.readKeys('k1')).toBeNull();
    },
  );

  it.skipIf(engine.skip)('adds the key columns to tables made before them, keeping their rows', async () => {
    await store.create(batch('old'));
    await store.append('old', part(0, 0, 2), 10);
    await open.splice(open.indexOf(store), 1)[0]!.close();
    await asBeforeKeys(location);
    const reopened = await openAt(location);
    expect(await reopened.get('old')).toMatchObject({ items: 2, state: 'open' });
    expect(await reopened.get('old')).not.toHaveProperty('fairnessKey');
    expect(await reopened.readKeys('old')).toBeNull();
    await reopened.create({ ...batch('new'), fairnessKey: 'team-a' });
    await reopened.append('new', { ...part(0, 0, 1), fairnessKeys: ['user-1'] }, 10);
    expect(await reopened.get('new')).toMatchObject({ fairnessKey: 'team-a' });
    expect(await reopened.readKeys('new')).toEqual(['user-1']);
  });

  it.skipIf(engine.skip)('another handle (another process) reads what the API wrote', async () => {
    await store.create(batch('b4'));
    await store.append('b4', part(0, 0, 5), 10);
    const worker = await openAt(location);
    expect(await worker.readItems('b4', [4, 1])).toEqual([...items(4, 1), ...items(1, 1)]);
  });
});

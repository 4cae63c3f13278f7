import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatchParts } from '../../bench/scenarios/batch-parts';
import { openBatchItems, batchItemsLocation } from '../../src/activities/open-batch-items';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * Issue 11, row 1 on the real dev server: a batch of maximal legal items (audit, 50 targets of 500
 * characters: about 25 KB each) sent in parts; every item's run completes with its own item, and the
 * batch workflow's history holds a count, never the items. The full size (10,000 items, about
 * 250 MB) is `npm run drill:batch-parts -- --items 10000`; here BATCH_PARTS_ITEMS (default 120, about
 * 3 MB: twice what one request may carry) keeps the suite's cost down on a shared machine.
 */
const ITEMS = Number(process.env.BATCH_PARTS_ITEMS ?? 120);

describe('a batch of maximal items sent in parts (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '32' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it(`${ITEMS} maximal audit items in parts of 30: each part once, every item's run completes with its own item`, async () => {
    const r = await runBatchParts(s, { items: ITEMS, partItems: 30, timeoutMs: 1_500_000, check: ITEMS });
    expect(r.failures).toEqual([]);
    expect(r.oneRequestStatus).toBe(413);
    expect(r.retriedPart).toMatchObject({ replayed: true });
    expect(r.final).toEqual({ completed: ITEMS, failed: 0, cancelled: 0, queued: 0, running: 0 });
    expect(r.checked).toBe(ITEMS);
    expect(r.mismatched).toEqual([]);
    expect(r.batchHistoryBytes).toBeLessThan(r.itemBytes / 10);
    // Every run exists and carries its own input: the stored items were let go.
    const store = await openBatchItems(batchItemsLocation(s.config));
    try {
      await expect(store.readItems(r.batchId, [0])).rejects.toThrow(/no stored item/);
      expect(await store.get(r.batchId)).toMatchObject({ state: 'committed', started: true, items: ITEMS });
    } finally {
      await store.close();
    }
  }, 1_800_000);
});

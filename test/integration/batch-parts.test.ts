import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatchParts } from '../../bench/scenarios/batch-parts';
import { openBatchItems, batchItemsLocation } from '../../src/stores/open';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * Issue 11, row 1 on the real dev server: a batch of maximal legal items (audit, 50 targets of 500
 * characters: about 25 KB each) sent in parts; every item's run completes with its own item, and the
 * batch workflow's history holds a count, never the items. The full size (10,000 items, about
 * 250 MB) is `npm run drill:batch-parts -- --items 10000`. Here BATCH_PARTS_ITEMS (default 24, in 3
 * parts, one of them sent twice) keeps the suite's cost down: an audit run makes 50 model calls and 50
 * tool calls, about a CPU-second of this machine's dev server and worker. The single request that the
 * door must refuse (413) carries 72 of the same items (about 1.8 MB, over the 1.5 MiB start-argument
 * limit); refused at the door, it runs nothing.
 */
const ITEMS = Number(process.env.BATCH_PARTS_ITEMS ?? 24);
const PART_ITEMS = 8;
const ONE_REQUEST_ITEMS = 72;

describe('a batch of maximal items sent in parts (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    // Every item admitted at once. An audit run reserves 25,000 tokens and the governor starts at 2M
    // tokens a minute (within 80% of the simulator's default quota): at the defaults it admitted about
    // one run a second, and 120 items took 110 s with 2 of 32 slots busy. Admission pacing has its own
    // tests (fairness, backpressure, governor-faults); this one is about the items.
    s = await startTestStack({
      FLEET_CONCURRENCY: '80',
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
      GOVERNOR_INITIAL_TPM: '100000000',
    });
  });
  afterAll(async () => {
    await s?.close();
  });

  it(`${ITEMS} maximal audit items in parts of ${PART_ITEMS}: each part once, every item's run completes with its own item`, async () => {
    const r = await runBatchParts(s, {
      items: ITEMS,
      partItems: PART_ITEMS,
      timeoutMs: 1_500_000,
      check: ITEMS,
      oneRequestItems: ONE_REQUEST_ITEMS,
    });
    expect(r.failures).toEqual([]);
    expect(r.oneRequestStatus).toBe(413);
    expect(r.oneRequestBytes).toBeGreaterThan(1.5 * 1024 * 1024);
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

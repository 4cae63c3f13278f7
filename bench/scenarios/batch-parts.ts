import type { Client } from '@temporalio/client';
import type { BatchResumeStack } from './batch-resume';

/** The largest legal audit item: 50 targets of 500 characters (about 25 KB as JSON). */
export function maximalAuditItem(i: number): { targets: string[] } {
  return {
    targets: Array.from({ length: 50 }, (_, t) => `${i}/${t}:`.padEnd(500, 'abcdefghij'.charAt(t % 10))),
  };
}

export interface BatchPartsResult {
  items: number;
  parts: number;
  /** The items' size as JSON, all parts together. */
  itemBytes: number;
  batchId: string;
  /** The same items (or `oneRequestItems` of them) as one `POST /v1/batches`: refused at the door (413), never failed later. */
  oneRequestStatus: number;
  oneRequestBytes: number;
  /** A part sent twice: the second answer says `replayed` and the total does not move. */
  retriedPart: { replayed: boolean; totalBefore: number; totalAfter: number };
  /** The batch workflow's whole history, as JSON: its input holds a count, not the items. */
  batchHistoryBytes: number;
  /** Seconds: appending every part, the commit, until every run had finished. */
  appendSeconds: number;
  commitSeconds: number;
  runSeconds: number;
  final: { completed: number; failed: number; cancelled: number; queued: number; running: number };
  /** Runs checked one by one (status and that their findings are their own item's targets). */
  checked: number;
  mismatched: string[];
  failures: string[];
  pass: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 11, row 1 end to end: `items` maximal audit items sent as a batch in parts of `partItems`
 * (`POST /v1/batches/open`, `…/items` per part, one part sent twice, `…/commit`); every item's run
 * must complete with its own item's targets. The same items as one request are refused with 413.
 */
export async function runBatchParts(
  s: BatchResumeStack & { client: Client },
  opts: {
    items: number;
    partItems: number;
    timeoutMs: number;
    check: number;
    /** false: stop once every item's run exists (the batch workflow is done), not when all have finished. */
    complete?: boolean;
    /** How often the batch's view is read while its runs finish (ms; default 2,000). */
    pollMs?: number;
    /** Gives up when no run of the batch has ended for this long (a dead server); default: never. */
    stallMs?: number;
    /**
     * How many maximal items the single `POST /v1/batches` carries (default `items`, at least `items`):
     * more than the parts when they are too few to exceed the door's start-argument limit, so that the
     * refusal is still tested without running that many audit runs (50 tool calls each).
     */
    oneRequestItems?: number;
    log?: (m: string) => void;
  },
): Promise<BatchPartsResult> {
  const log = opts.log ?? (() => {});
  const failures: string[] = [];
  const id = Math.random().toString(36).slice(2, 8);
  const key = await s.tenant(`parts-${id}`, { maxQueued: opts.items * 2, maxInFlight: 1000 });
  const items = Array.from({ length: opts.items }, (_, i) => maximalAuditItem(i));
  const itemBytes = Buffer.byteLength(JSON.stringify(items));

  // Only when it fits the 4 MB body: then the door's 1.5 MiB start-argument limit must refuse it.
  // The parts' items, and more after them when `oneRequestItems` asks for more (never built or
  // measured twice: at 10,000 items they are 250 MB of JSON).
  const extra = Math.max(0, (opts.oneRequestItems ?? 0) - opts.items);
  const oneRequest =
    extra === 0
      ? items
      : [...items, ...Array.from({ length: extra }, (_, k) => maximalAuditItem(opts.items + k))];
  const oneRequestBytes = extra === 0 ? itemBytes : Buffer.byteLength(JSON.stringify(oneRequest));
  const oneRequestStatus =
    oneRequestBytes < 4_000_000
      ? (await s.call('POST', '/v1/batches', { token: key, body: { agent: 'audit', items: oneRequest } }))
          .status
      : 413;
  if (oneRequestStatus !== 413)
    failures.push(`one request of ${oneRequestBytes} bytes answered ${oneRequestStatus}`);

  const t0 = Date.now();
  const opened = await s.call('POST', '/v1/batches/open', { token: key, body: { agent: 'audit' } });
  if (opened.status !== 201) throw new Error(`open: ${opened.status} ${JSON.stringify(opened.body)}`);
  const batchId = opened.body.batchId as string;
  /** Sends a part until it is answered 200 (429 and 503 are retried: the part is appended once). */
  const send = async (part: number) => {
    const body = { part, items: items.slice(part * opts.partItems, (part + 1) * opts.partItems) };
    for (;;) {
      const r = await s.call('POST', `/v1/batches/${batchId}/items`, {
        token: key,
        body,
        timeoutMs: 120_000,
      });
      if (r.status === 200) return r.body as { total: number; replayed: boolean; firstIndex: number };
      if (r.status !== 429 && r.status !== 503)
        throw new Error(`part ${part}: ${r.status} ${JSON.stringify(r.body)}`);
      await sleep(1000);
    }
  };
  const parts = Math.ceil(opts.items / opts.partItems);
  let retriedPart = { replayed: false, totalBefore: 0, totalAfter: 0 };
  for (let p = 0; p < parts; p++) {
    const first = await send(p);
    if (first.firstIndex !== p * opts.partItems) failures.push(`part ${p} starts at ${first.firstIndex}`);
    if (p === Math.min(1, parts - 1)) {
      const again = await send(p);
      retriedPart = { replayed: again.replayed, totalBefore: first.total, totalAfter: again.total };
    }
    log(`appended part ${p + 1} of ${parts}`);
  }
  if (!retriedPart.replayed || retriedPart.totalAfter !== retriedPart.totalBefore)
    failures.push(`a retried part was appended again: ${JSON.stringify(retriedPart)}`);
  const t1 = Date.now();
  let committed = await s.call('POST', `/v1/batches/${batchId}/commit`, { token: key });
  while (committed.status === 429 || committed.status === 503) {
    await sleep(1000);
    committed = await s.call('POST', `/v1/batches/${batchId}/commit`, { token: key });
  }
  if (committed.status !== 202 || committed.body.total !== opts.items)
    throw new Error(`commit: ${committed.status} ${JSON.stringify(committed.body)}`);
  const t2 = Date.now();

  type View = BatchPartsResult['final'] & { total: number };
  let view: View = { completed: 0, failed: 0, cancelled: 0, queued: opts.items, running: 0, total: 0 };
  const complete = opts.complete ?? true;
  // Every run exists once the batch workflow returns (its last chunk offered).
  if (!complete) await s.client.workflow.getHandle(batchId).result();
  const deadline = complete ? Date.now() + opts.timeoutMs : 0;
  let ended = -1;
  let endedAt = Date.now();
  for (let first = true; first || Date.now() < deadline; first = false) {
    const r = await s.call('GET', `/v1/batches/${batchId}`, { token: key });
    if (r.status === 200) view = r.body as View;
    log(`batch: ${view.completed} completed, ${view.running} running, ${view.queued} queued`);
    const nowEnded = view.completed + view.failed + view.cancelled;
    if (nowEnded >= opts.items) break;
    if (nowEnded !== ended) [ended, endedAt] = [nowEnded, Date.now()];
    else if (opts.stallMs !== undefined && Date.now() - endedAt > opts.stallMs) {
      failures.push(`no run ended for ${Math.round(opts.stallMs / 1000)} s, at ${nowEnded} of ${opts.items}`);
      break;
    }
    // Each read counts the batch's runs by status in visibility (six counts over every run of the
    // batch): at 10,000 runs every 2 s that took half a core of the dev server from the runs.
    await sleep(opts.pollMs ?? 2000);
  }
  const t3 = Date.now();
  const { completed, failed, cancelled, queued, running } = view;
  if (complete && completed !== opts.items) failures.push(`${completed} of ${opts.items} items completed`);

  const history = await s.client.workflow.getHandle(batchId).fetchHistory();
  const batchHistoryBytes = Buffer.byteLength(JSON.stringify(history));
  if (batchHistoryBytes > itemBytes / 4 && itemBytes > 1_000_000)
    failures.push(
      `the batch workflow's history is ${batchHistoryBytes} bytes for ${itemBytes} bytes of items`,
    );

  // Every run is its own item: checked one by one (spread over the batch when `check` < items). Not
  // waiting for completion, the runs are counted in visibility instead (a busy fleet's run reads are slow).
  const mismatched: string[] = [];
  let checked = 0;
  if (complete) {
    const step = Math.max(1, Math.floor(opts.items / Math.max(1, opts.check)));
    for (let i = 0; i < opts.items; i += step) {
      const runId = `${batchId}-${i}`;
      const r = await s.call('GET', `/v1/runs/${runId}`, { token: key });
      const targets = (r.body?.result?.findings ?? []).map((f: { target: string }) => f.target);
      if (r.body?.status !== 'completed' || JSON.stringify(targets) !== JSON.stringify(items[i]!.targets))
        mismatched.push(runId);
      checked++;
    }
  } else {
    const { count } = await s.client.workflow.count(`BatchId = '${batchId}'`);
    if (count !== opts.items) failures.push(`${count} of ${opts.items} runs exist`);
  }
  if (mismatched.length > 0) failures.push(`${mismatched.length} runs did not run their own item`);
  return {
    items: opts.items,
    parts,
    itemBytes,
    batchId,
    oneRequestStatus,
    oneRequestBytes,
    retriedPart,
    batchHistoryBytes,
    appendSeconds: (t1 - t0) / 1000,
    commitSeconds: (t2 - t1) / 1000,
    runSeconds: (t3 - t2) / 1000,
    final: { completed, failed, cancelled, queued, running },
    checked,
    mismatched: mismatched.slice(0, 20),
    failures,
    pass: failures.length === 0,
  };
}

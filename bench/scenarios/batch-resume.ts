import type { Client } from '@temporalio/client';

/** What the batch-resume scenario needs of a stack: HTTP to the API, tenants, and Temporal visibility. */
export interface BatchResumeStack {
  call(
    method: string,
    route: string,
    opts?: { body?: unknown; token?: string; timeoutMs?: number },
  ): Promise<{ status: number; body: any }>;
  tenant(name: string, settings?: Record<string, unknown>): Promise<string>;
  client: Client;
}

export interface BatchResumeResult {
  items: number;
  failing: number;
  batchId: string;
  /** The batch's counts when its first pass was done, and after the resume. */
  firstPass: { completed: number; failed: number };
  resumed: number;
  final: { completed: number; failed: number; queued: number; running: number; progress: number };
  /** Run ids that ran twice (one execution more), against the ids that had failed. */
  reran: { expected: number; actual: number; unexpected: string[]; missing: string[] };
  /** The other tenant's runs submitted while the batch had items left, and how many finished before it did. */
  other: { submitted: number; finishedWhileBatchPending: number };
  seconds: number;
  failures: string[];
  pass: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 13's batch drill: `items` synthetic items, every `failEvery`-th failing for good (failAtStep),
 * fanned out at batch priority while another tenant submits runs in the same lane; once the first pass
 * is done, `POST /v1/batches/:id/resume` re-drives the failed ones. Checks that exactly the failed items
 * ran again (one execution more each, visibility), that the final counts are exact, and that the other
 * tenant's runs finished while the batch still had items pending (fair share, not after it).
 */
export async function runBatchResume(
  s: BatchResumeStack,
  opts: {
    items: number;
    failEvery: number;
    stepMs: number;
    otherRuns: number;
    timeoutMs: number;
    log?: (m: string) => void;
  },
): Promise<BatchResumeResult> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const failures: string[] = [];
  const id = Math.random().toString(36).slice(2, 8);
  const owner = await s.tenant(`bulk-${id}`, { maxQueued: opts.items * 2, maxInFlight: 1000 });
  const other = await s.tenant(`other-${id}`, { maxQueued: 1000, maxInFlight: 1000 });
  const failingIndex = (i: number) => i % opts.failEvery === 0;
  const items = Array.from({ length: opts.items }, (_, i) => ({
    steps: 1,
    tokensPerStep: 10,
    stepMs: opts.stepMs,
    ...(failingIndex(i) ? { failAtStep: 1 } : {}),
  }));
  const failing = items.filter((_, i) => failingIndex(i)).length;
  const created = await s.call('POST', '/v1/batches', {
    token: owner,
    body: { agent: 'synthetic', priority: 'batch', items },
  });
  if (created.status !== 202) throw new Error(`batch: ${created.status} ${JSON.stringify(created.body)}`);
  const batchId = created.body.batchId as string;
  const batch = async () => (await s.call('GET', `/v1/batches/${batchId}`, { token: owner })).body;
  const done = (b: any) => b.completed + b.failed + b.cancelled >= b.total;

  // The other tenant submits in the same lane while the batch runs; each of its runs is watched.
  const otherIds: string[] = [];
  const otherFinishedWhilePending = new Set<string>();
  let view = await batch();
  const deadline = t0 + opts.timeoutMs;
  while (!done(view) && Date.now() < deadline) {
    if (otherIds.length < opts.otherRuns) {
      const r = await s.call('POST', '/v1/runs', {
        token: other,
        body: {
          agent: 'synthetic',
          priority: 'batch',
          input: { steps: 1, tokensPerStep: 10, stepMs: opts.stepMs },
        },
      });
      if (r.status === 202) otherIds.push(r.body.runId as string);
    }
    for (const runId of otherIds) {
      if (otherFinishedWhilePending.has(runId)) continue;
      const v = (await s.call('GET', `/v1/runs/${runId}`, { token: other })).body;
      // Finished, and the batch still had items left after that: it was admitted alongside the batch.
      if (v.status === 'completed' && !done(await batch())) otherFinishedWhilePending.add(runId);
    }
    view = await batch();
    log(
      `batch ${view.completed + view.failed}/${view.total}, other tenant ${otherFinishedWhilePending.size}/${otherIds.length}`,
    );
    await sleep(500);
  }
  const firstPass = { completed: view.completed as number, failed: view.failed as number };
  if (!done(view)) failures.push(`first pass not done in time: ${JSON.stringify(view)}`);
  if (firstPass.failed !== failing)
    failures.push(`first pass failed ${firstPass.failed}, expected ${failing}`);
  if (firstPass.completed !== opts.items - failing)
    failures.push(`first pass completed ${firstPass.completed}, expected ${opts.items - failing}`);

  // A resume lists the batch's executions and restarts each failed item: slow on a loaded machine.
  const resumed = await s.call('POST', `/v1/batches/${batchId}/resume`, { token: owner, timeoutMs: 300_000 });
  if (resumed.status !== 202) failures.push(`resume answered ${resumed.status}`);
  const resumedCount = (resumed.body?.resumed as number) ?? 0;
  // The re-driven items fail again (failAtStep is part of their input): the batch ends where it was.
  const executions = async () => {
    const per = new Map<string, number>();
    for await (const wf of s.client.workflow.list({ query: `BatchId = '${batchId}'` }))
      per.set(wf.workflowId, (per.get(wf.workflowId) ?? 0) + 1);
    return per;
  };
  let per = await executions();
  while (Date.now() < deadline) {
    per = await executions();
    const again = [...per.values()].filter((n) => n > 1).length;
    const open = await s.client.workflow.count(`BatchId = '${batchId}' AND ExecutionStatus = 'Running'`);
    if (again >= failing && open.count === 0) break;
    await sleep(1000);
  }
  const expected = new Set(items.map((_, i) => `${batchId}-${i}`).filter((_, i) => failingIndex(i)));
  const twice = [...per].filter(([, n]) => n > 1).map(([runId]) => runId);
  const reran = {
    expected: expected.size,
    actual: twice.length,
    unexpected: twice.filter((r) => !expected.has(r)).slice(0, 20),
    missing: [...expected].filter((r) => !twice.includes(r)).slice(0, 20),
  };
  if (reran.unexpected.length > 0 || reran.missing.length > 0 || reran.actual !== failing)
    failures.push(`re-ran ${JSON.stringify(reran)}`);
  if ([...per.values()].some((n) => n > 2)) failures.push('an item ran more than twice');
  const last = await batch();
  const final = {
    completed: last.completed as number,
    failed: last.failed as number,
    queued: last.queued as number,
    running: last.running as number,
    progress: (last.completed + last.failed + last.cancelled) / last.total,
  };
  if (resumedCount !== failing) failures.push(`resume re-drove ${resumedCount}, expected ${failing}`);
  if (
    final.completed !== opts.items - failing ||
    final.failed !== failing ||
    final.queued !== 0 ||
    final.running !== 0
  )
    failures.push(`final counts ${JSON.stringify(final)}`);
  const otherResult = {
    submitted: otherIds.length,
    finishedWhileBatchPending: otherFinishedWhilePending.size,
  };
  if (otherResult.submitted === 0 || otherResult.finishedWhileBatchPending === 0)
    failures.push(
      `the other tenant got no run through while the batch was pending: ${JSON.stringify(otherResult)}`,
    );
  return {
    items: opts.items,
    failing,
    batchId,
    firstPass,
    resumed: resumedCount,
    final,
    reran,
    other: otherResult,
    seconds: (Date.now() - t0) / 1000,
    failures,
    pass: failures.length === 0,
  };
}

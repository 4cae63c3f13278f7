/** The minimal HTTP surface a scenario needs: the integration harness and the bench stack both provide it. */
export interface ScenarioStack {
  call(
    method: string,
    route: string,
    opts?: { token?: string; body?: unknown },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  tenant(name: string, settings?: Record<string, unknown>): Promise<string>;
  id: string;
}

export interface FloodResult {
  aUnits: number;
  bUnits: number;
  /** A's admissions between B's submission and B's last admission. */
  aAdmissionsWhileBWaited: number;
  /**
   * A's units queued at the scheduler when B submitted, and at least how many were still queued when
   * B's last unit was admitted (queued then, less A's admissions since: A's queue only grows by
   * arrivals). The bound on A's admissions means something only if A could have taken them (at least
   * 100 queued at B's submission); with fewer than 100 taken, A then stayed backlogged while B waited
   * (the second above 0). A's queue read after B's admissions have been polled may already have
   * drained on a loaded machine; this bound does not depend on when it is read.
   */
  aQueuedAtB: number;
  aQueuedWhenBDone: number;
  /** Jain's index over A's and B's weight-normalised token shares while both were backlogged. */
  jain: number;
  seconds: number;
  counters: Record<string, number>;
  effects: { effects: number; attempts: number; duplicates: number };
  batch: Record<string, number>;
  submitAccepted: number;
}

/**
 * Issue 3's bound: all of B's units are admitted before A receives this many more admissions. B also
 * waits for A to have this many queued, so that A could have taken them.
 */
export const FLOOD_BOUND = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until `done` holds; throws with what it last saw when `timeoutMs` passes first. */
async function poll<T>(
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  everyMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (done(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`flood: not met within ${timeoutMs} ms; last saw ${JSON.stringify(v).slice(0, 2000)}`);
    await sleep(everyMs);
  }
}

/**
 * The scheduler's counters after a flood of `total` units, checked as the flood's acceptance reads
 * ("every unit completes, none lost, none run twice"); one line per violation, none when it holds.
 * Admissions count attempts: a run whose lease expired before its step (a loaded machine) is admitted
 * again, and its expired attempt is counted in `expired`. So every run was admitted, every admission
 * that did not expire ended in one run's completion, and each run was counted completed exactly once.
 */
export function floodCounterFailures(c: Record<string, number | undefined>, total: number): string[] {
  const { admitted = 0, expired = 0, adopted = 0, completed = 0 } = c;
  const failures: string[] = [];
  if (admitted < total) failures.push(`admitted ${admitted} < ${total} units`);
  if (admitted - expired > total) failures.push(`admitted ${admitted} - expired ${expired} > ${total} units`);
  if (adopted !== 0) failures.push(`adopted ${adopted} leases outside a recovery`);
  if (completed !== total) failures.push(`completed ${completed} ≠ ${total} units`);
  for (const k of ['failed', 'cancelled', 'inFlight', 'queued'] as const)
    if ((c[k] ?? 0) !== 0) failures.push(`${k} ${c[k]}`);
  return failures;
}

/**
 * Issue 3's flood: tenant A submits `aUnits` units; one second later, once A has at least 100 of
 * them queued at the scheduler, tenant B (same weight) submits `bUnits`; then every unit must
 * complete exactly once, as runs of `agent`. Returns what a test asserts.
 */
export async function runFlood(
  s: ScenarioStack,
  aUnits: number,
  bUnits = 10,
  timeoutMs = 900_000,
  agent = 'synthetic',
): Promise<FloodResult> {
  const t0 = Date.now();
  const aTenant = `flood-a-${s.id}`;
  const a = await s.tenant(aTenant, { maxQueued: 20_000, maxInFlight: 50 });
  const b = await s.tenant(`flood-b-${s.id}`, { maxQueued: 20_000, maxInFlight: 50 });
  const unit = { steps: 1, tokensPerStep: 100, effect: true };
  const batchA = await s.call('POST', '/v1/batches', {
    token: a,
    body: { agent, priority: 'standard', items: Array.from({ length: aUnits }, () => unit) },
  });
  if (batchA.status !== 202) throw new Error(`batch: ${batchA.status} ${JSON.stringify(batchA.body)}`);
  await sleep(1000);
  // One second after the batch is accepted its runs may not have reached the scheduler yet (the
  // batch workflow starts them in chunks): then B would race A's arrival instead of meeting a backlog,
  // and the bound on A's admissions would hold for want of one. So B waits until A has at least 100
  // units (or all of them) queued at the scheduler.
  const aQueued = (st: any) => (st?.queued?.byTenant?.[aTenant] as number | undefined) ?? 0;
  const atB = (
    await poll(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => aQueued(v.body) >= Math.min(FLOOD_BOUND, aUnits),
      timeoutMs,
      50,
    )
  ).body;
  const admittedAtB = atB.counters.admitted as number;
  const aQueuedAtB = aQueued(atB);
  const runsB = await Promise.all(
    Array.from({ length: bUnits }, () =>
      s.call('POST', '/v1/runs', { token: b, body: { agent, input: unit } }),
    ),
  );
  const bIds = runsB.filter((r) => r.status === 202).map((r) => r.body.runId as string);
  const seqs: number[] = [];
  for (const id of bIds) {
    const r = await poll(
      () => s.call('GET', `/v1/runs/${id}`, { token: b }),
      (v) => typeof v.body?.admissionSeq === 'number',
      timeoutMs,
      250,
    );
    seqs.push(r.body.admissionSeq as number);
  }
  const aMeanwhile = Math.max(...seqs) - admittedAtB - bIds.length;
  // Both tenants were backlogged in that window; equal weights and equal unit costs.
  const shares = [Math.max(0, aMeanwhile), bIds.length];
  const jain = (shares[0]! + shares[1]!) ** 2 / (2 * (shares[0]! ** 2 + shares[1]! ** 2));

  const total = aUnits + bIds.length;
  const status = await poll(
    () => s.call('GET', '/v1/admin/scheduler'),
    (v) => v.body?.counters?.completed >= total,
    timeoutMs,
    2000,
  );
  const batch = (await s.call('GET', `/v1/batches/${batchA.body.batchId}`, { token: a })).body;
  const effects = (await s.call('GET', '/v1/admin/effects/summary')).body;
  return {
    aUnits,
    bUnits,
    aAdmissionsWhileBWaited: aMeanwhile,
    aQueuedAtB,
    aQueuedWhenBDone: aQueuedAtB - aMeanwhile,
    jain,
    seconds: (Date.now() - t0) / 1000,
    counters: { ...status.body.counters, inFlight: status.body.inFlight, queued: status.body.queued.total },
    effects,
    batch,
    submitAccepted: bIds.length,
  };
}

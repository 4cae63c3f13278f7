import { log } from '@temporalio/workflow';
import type { FleetScheduler } from '../scheduler';
import type { Charge, ModelObservation, Release, ReleaseOutcome, Renewal } from '../scheduler/types';
import type { FleetSummary } from '../scheduler/status';
import type { WorkerReport } from '../contract/scheduler-messages';

/** Applies a worker's batched report; returns whether anything may now be admitted. Never throws. */
export function applyReport(core: FleetScheduler, raw: WorkerReport, now: number): boolean {
  try {
    const report = cleanReport(raw);
    if (report === null) return false;
    // Fences before charges: a sweep's report fences the owners whose calls it charges.
    if (report.fenced?.length) core.fenceOwners(report.fenced);
    // Charges before releases: a release in the same report then finds its lease's calls booked.
    if (report.charges?.length) core.charge(report.charges, now);
    if (report.settled?.length) core.forgetCharges(report.settled);
    if (report.renewals?.length) core.renew(report.renewals, now);
    if (report.observations?.length) core.observe(report.observations, now);
    if (report.cancels?.length) core.cancel(report.cancels, now);
    const releases = [
      ...(report.releases ?? []),
      ...(report.unreachable ?? []).map((u) => ({ ...u, usedTokens: 0, outcome: 'cancelled' as const })),
    ];
    if (releases.length) core.release(releases, now);
    return true;
  } catch (err) {
    log.warn('dropped a malformed report', { err: String(err) });
    return false;
  }
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isId = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= 200;
const isKey = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= 400;
const isChargeId = (x: unknown): x is string => typeof x === 'string' && /^[0-9a-z]{8}$/.test(x);
const OUTCOMES: readonly string[] = ['completed', 'failed', 'cancelled', 'gated'] satisfies ReleaseOutcome[];

/** Keeps the well-formed items of each list (a list that is not an array counts as empty). */
function wellFormed<T>(list: unknown, ok: (x: Record<string, unknown>) => boolean, dropped: number[]): T[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    dropped[0]!++;
    return [];
  }
  const out = list.filter((x): x is Record<string, unknown> => isObject(x) && ok(x));
  dropped[0]! += list.length - out.length;
  return out as T[];
}

/**
 * A report as the core may take it: malformed items are dropped (and logged), never thrown, so a
 * garbage `report` signal (from a confused client or the CLI) cannot fail or wedge the scheduler.
 * Returns null when the report itself is not an object.
 */
export function cleanReport(report: unknown): WorkerReport | null {
  if (!isObject(report)) {
    log.warn('dropped a malformed report', { report: String(JSON.stringify(report)).slice(0, 200) });
    return null;
  }
  const dropped = [0];
  const clean: WorkerReport = {
    charges: wellFormed<Charge>(
      report.charges,
      (c) =>
        isId(c.runId) &&
        typeof c.tenant === 'string' &&
        isNum(c.attempt) &&
        isNum(c.tokens) &&
        (c.key === undefined || isKey(c.key)) &&
        (c.correction === undefined || typeof c.correction === 'boolean') &&
        (c.owner === undefined || isChargeId(c.owner)),
      dropped,
    ),
    releases: wellFormed<Release>(
      report.releases,
      (r) =>
        isId(r.runId) && isNum(r.attempt) && isNum(r.usedTokens) && OUTCOMES.includes(r.outcome as string),
      dropped,
    ),
    renewals: wellFormed<Renewal>(
      report.renewals,
      (r) =>
        isId(r.runId) &&
        isNum(r.attempt) &&
        isNum(r.usedTokens) &&
        (r.pool === undefined || typeof r.pool === 'string'),
      dropped,
    ),
    observations: wellFormed<ModelObservation>(
      report.observations,
      (o) =>
        isNum(o.at) &&
        isNum(o.calls) &&
        isNum(o.throttled) &&
        isNum(o.maxRetryAfterMs) &&
        isNum(o.tokens) &&
        [
          o.remainingTokens,
          o.limitTokens,
          o.resetTokensMs,
          o.remainingRequests,
          o.limitRequests,
          o.resetRequestsMs,
        ].every((x) => x === undefined || isNum(x)) &&
        (o.pool === undefined || typeof o.pool === 'string'),
      dropped,
    ),
    unreachable: wellFormed(report.unreachable, (u) => isId(u.runId) && isNum(u.attempt), dropped),
    cancels: Array.isArray(report.cancels) ? report.cancels.filter(isId) : [],
    settled: Array.isArray(report.settled) ? report.settled.filter(isChargeId) : [],
    fenced: Array.isArray(report.fenced) ? report.fenced.filter(isChargeId) : [],
  };
  dropped[0]! += Array.isArray(report.cancels) ? report.cancels.length - clean.cancels!.length : 0;
  if (report.cancels !== undefined && !Array.isArray(report.cancels)) dropped[0]!++;
  if (dropped[0]! > 0) log.warn('dropped malformed items of a report', { dropped: dropped[0] });
  return clean;
}

/** The one-line summary the Web UI shows as the scheduler's current details. */
export function summaryLine(s: FleetSummary): string {
  const q = s.queued.byPriority;
  return (
    `mode ${s.mode} · intake ${s.intake} · in flight ${s.inFlight}/${Math.min(s.config.concurrency, s.governor.concurrencyLimit)}` +
    ` · queued ${s.queued.total} (i ${q.interactive} / s ${q.standard} / b ${q.batch})` +
    ` · admitted ${s.counters.admitted} · governor ${s.governor.tokensPerMinute} tpm${s.governor.throttledRecently ? ' (throttled)' : ''}`
  );
}

/**
 * Applies each report once in this run, by its id (reports without one, from older workers, always):
 * the same report may arrive as an update sent again and as a signal (a stopping worker's).
 */
export function reportsOnce(apply: (report: WorkerReport) => void): (report: WorkerReport) => void {
  const applied = new Set<string>();
  return (report) => {
    const id = (report as { id?: unknown } | null | undefined)?.id;
    if (typeof id === 'string') {
      if (applied.has(id)) return;
      applied.add(id);
    }
    apply(report);
  };
}

/**
 * When a timer started now for the core's next wake-up (`wake`) is due, or null when none is needed.
 * `pending` is when the timer last started is due (null when none). A pending timer whose time has
 * come counts as fired, whether or not its fire has been seen: the answer depends on workflow time
 * alone. A pending timer due no later than `wake` covers it. A timer lasts 1 ms at least.
 */
export function timerToArm(pending: number | null, wake: number | null, now: number): number | null {
  if (wake === null) return null;
  const due = Math.max(wake, now + 1);
  if (pending !== null && pending > now && pending <= due) return null;
  return due;
}

import { log } from '@temporalio/workflow';
import type { FleetScheduler } from '../scheduler';
import { PRIORITIES } from '../scheduler/types';
import type { SchedulerStatus, UnitSubmission } from '../scheduler/types';
import type { WorkerReport } from './scheduler-messages';

/** Update validator (synchronous, so a throw rejects the update and writes no history). */
export function validateSubmissions(units: UnitSubmission[]): void {
  if (!Array.isArray(units)) throw new TypeError('submit expects an array of units');
  for (const u of units) {
    if (
      typeof u?.runId !== 'string' ||
      typeof u.tenant !== 'string' ||
      !PRIORITIES.includes(u.priority) ||
      typeof u.cost !== 'number' ||
      !Number.isFinite(u.cost) ||
      u.cost < 0
    ) {
      throw new TypeError(`malformed unit: ${JSON.stringify(u).slice(0, 200)}`);
    }
  }
}

/** Applies a worker's batched report; returns whether anything may now be admitted. Never throws. */
export function applyReport(core: FleetScheduler, report: WorkerReport, now: number): boolean {
  try {
    // Charges first: a release in the same report then finds its lease's calls already booked.
    if (report.charges?.length) core.charge(report.charges, now);
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

/** The one-line summary the Web UI shows as the scheduler's current details. */
export function summaryLine(s: SchedulerStatus): string {
  const q = s.queued.byPriority;
  return (
    `mode ${s.mode} · intake ${s.intake} · in flight ${s.inFlight}/${Math.min(s.config.concurrency, s.governor.concurrencyLimit)}` +
    ` · queued ${s.queued.total} (i ${q.interactive} / s ${q.standard} / b ${q.batch})` +
    ` · admitted ${s.counters.admitted} · governor ${s.governor.tokensPerMinute} tpm${s.governor.throttledRecently ? ' (throttled)' : ''}`
  );
}

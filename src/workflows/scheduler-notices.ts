import type { BudgetRefusal, FleetScheduler } from '../scheduler';
import type { Admission } from '../scheduler/types';
import { admitNoticeOf } from '../contract/admit-notice';
import { notifyAdmissions, notifyBudgetRefused, notifyRevoked } from './scheduler-activities';
import { applyReport } from './scheduler-support';
import type { SchedulerWork } from './scheduler-work';

/** Notices per activity: one activity tells many runs (a few events per batch, not per run). */
export const NOTICE_BATCH = 250;

function inBatches<T>(list: readonly T[], send: (part: T[]) => void): void {
  for (let i = 0; i < list.length; i += NOTICE_BATCH) send(list.slice(i, i + NOTICE_BATCH));
}

/** Tells admitted runs; a run the notice cannot reach gives its slot back. */
export function sendAdmissions(work: SchedulerWork, core: FleetScheduler, admissions: Admission[]): void {
  inBatches(admissions, (part) => {
    const notices = part.map((a) => ({ runId: a.runId, notice: admitNoticeOf(a) }));
    work.track(
      notifyAdmissions(notices).then((unreachable) => {
        if (unreachable.length > 0) applyReport(core, { unreachable }, Date.now());
      }),
    );
  });
}

/** Tells runs whose lease expired. */
export function sendRevocations(work: SchedulerWork, expired: readonly Admission[]): void {
  inBatches(expired, (part) =>
    work.track(notifyRevoked(part.map((a) => ({ runId: a.runId, attempt: a.attempt })))),
  );
}

/** Tells runs whose queued units their tenant's budget can no longer cover (budget_exhausted). */
export function sendBudgetRefusals(work: SchedulerWork, refused: readonly BudgetRefusal[]): void {
  inBatches(refused, (part) => work.track(notifyBudgetRefused(part)));
}

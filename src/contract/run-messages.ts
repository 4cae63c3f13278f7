import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { RunSpec, RunView } from './fleet-port';
import type { AdmitNotice } from './admit-notice';

export type { AdmitNotice } from './admit-notice';

export const admitSignal = defineSignal<[AdmitNotice]>('admit');
/** The scheduler took the slot back (the lease expired): the run must queue again before its next step. */
export const leaseRevokedSignal = defineSignal<[{ attempt: number }]>('leaseRevoked');
/**
 * The scheduler took the queued attempt out of line: its tenant's budget can no longer cover it. A
 * run set to `fail` on an exhausted budget fails with `budget_exhausted`; one set to `park` waits and
 * offers itself again.
 */
export const budgetRefusedSignal = defineSignal<[{ attempt: number; message: string }]>('budgetRefused');
/** The scheduler was lost or reset (sent by the watchdog): a waiting run checks on it now. */
export const reofferSignal = defineSignal<[]>('reoffer');
export const cancelRunSignal = defineSignal<[]>('cancelRun');
/**
 * A gate's decision: `gateId` is the gate it decides (`RunGateView.gateId`; the run ignores it for
 * any other gate; absent, as older APIs sent it, it decides the open gate), `by` who decided (an API
 * key id or admin token name), `at` when the API took it (ISO 8601).
 */
export interface DecisionMessage {
  decision: 'approve' | 'reject';
  gateId?: number;
  note?: string;
  by?: string;
  at?: string;
}
export const decisionSignal = defineSignal<[DecisionMessage]>('decision');

/** The run as `GET /v1/runs/:id` shows it, except `waitingOn`, which the scheduler explains. */
export const runViewQuery = defineQuery<RunView>('runView');

/**
 * The run's own spec (its input included), for re-driving a failed run: `firstAttempt` is past every
 * attempt this execution made, so the new one's messages are never taken for this one's.
 */
export const runSpecQuery = defineQuery<RunSpec>('runSpec');

import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SettingsPatch } from '../scheduler/fleet-settings';
import type {
  Charge,
  LedgerEntry,
  ModelObservation,
  Refusal,
  Release,
  Renewal,
  SchedulerStatus,
  SubmitResult,
  TenantSettings,
  TenantStatus,
  TopUpResult,
  UnitSubmission,
  WaitingOn,
} from '../scheduler/types';

/** What a worker's mailbox sends in one report: many runs' releases and renewals, its model windows. */
export interface WorkerReport {
  /**
   * The report's own id (the mailbox's prefix and sequence number): one run of the scheduler applies a
   * report once, however many times it arrives (an update sent again, the same report as a signal).
   */
  id?: string;
  /** What the provider billed for this worker's calls since the last report, per run attempt or per call key. */
  charges?: Charge[];
  /**
   * Charge ids (`chargeId(key, correction)`) of keyed charges this worker has since settled in its
   * durable call store: no sweep or reconciler can send them again, so the ledger forgets them.
   */
  settled?: string[];
  /**
   * Owners (`ownerId`) whose calls this worker's sweep took over, sent no later than the sweep's
   * charges for them: charges those owners still send are not booked.
   */
  fenced?: string[];
  releases?: Release[];
  renewals?: Renewal[];
  observations?: ModelObservation[];
  /** Runs the admission notice could not reach (their workflow is gone): give their slots back. */
  unreachable?: { runId: string; attempt: number }[];
  /** Queued runs whose owners cancelled them. */
  cancels?: string[];
}

/** The core's own patch type: what `PATCH /v1/admin/scheduler` changes live. */
export type { SettingsPatch } from '../scheduler/fleet-settings';

/** Many units offered at once (the API coalesces concurrent requests into one update). */
export const submitUpdate = defineUpdate<SubmitResult[], [UnitSubmission[]]>('submit');
export const upsertTenantsUpdate = defineUpdate<void, [{ tenant: string; settings: TenantSettings }[]]>(
  'upsertTenants',
);
export const patchSettingsUpdate = defineUpdate<SchedulerStatus, [SettingsPatch]>('patchSettings');
export const drainUpdate = defineUpdate<SchedulerStatus, [{ intake?: 'refuse' | 'hold' }]>('drainNow');
export const resumeUpdate = defineUpdate<SchedulerStatus, []>('resumeNow');
/** A running unit asks for more reservation before a step that could overrun it (sent by an activity). */
export interface TopUpRequest {
  runId: string;
  attempt: number;
  tokens: number;
}
export const topUpUpdate = defineUpdate<TopUpResult, [TopUpRequest]>('topUp');
/** Many runs' top-ups at once (a worker coalesces its runs' requests); one answer each, in order. */
export const topUpsUpdate = defineUpdate<TopUpResult[], [TopUpRequest[]]>('topUps');

/**
 * A worker's report as an update (the mailbox's way; reports were signals before). A signal that arrives
 * while the scheduler's continue-as-new task is in flight fails that task (UnhandledCommand), and the
 * retry replays the whole run, long enough for the next report to fail it again: under a stream of
 * reports on a busy machine admission stopped for seconds. An update the closing run did not take is
 * handed back to its sender, who sends it again to the next run; the task never fails. The id the
 * mailbox gives each report lets the server answer a report sent twice to one run only once.
 */
export const reportUpdate = defineUpdate<void, [WorkerReport]>('workerReport');
/**
 * The same report as a signal: what a stopping worker sends (it polls no workflow tasks any more, so
 * an update it sends may find no worker to take it), and what the mailbox falls back to when the
 * scheduler answers it has no update handler. Not a twin of the update: keep it.
 */
export const reportSignal = defineSignal<[WorkerReport]>('report');
/**
 * The operator's switch from the Temporal CLI (no API token needed), beside `drainUpdate` on purpose:
 * `temporal workflow signal --workflow-id scheduler --name drain` (and `--name resume`); see
 * CONTRIBUTING.md, "Upgrading across a change that is not replay-safe".
 */
export const drainSignal = defineSignal<[{ intake?: 'refuse' | 'hold' }?]>('drain');
export const resumeSignal = defineSignal<[]>('resume');
/**
 * Sent by the watchdog when the chain is new or was reset: raise each tenant's `spent` to the usage
 * of the runs that finished in its period (visibility), so a lost ledger cannot be spent twice. The
 * chain also holds budgeted tenants until that floor lands; `followUp: true` (the watchdog's later
 * reminders) only takes the floor again.
 */
export const recoverSignal = defineSignal<[{ followUp?: boolean }?]>('recover');

/** A tenant's usage recovered from finished runs: `tokens` used since `periodStart`. */
export interface RecoveredUsage {
  tenant: string;
  periodStart: number;
  tokens: number;
}

/**
 * What a usage floor found: each tenant's usage, and how many run workflows were open past their
 * admission when it looked (counted before the finished runs are read). None means no run of a lost
 * chain can come back with usage the floor did not see (a queued run that had used some carries it
 * when it offers itself again), so the recovery's hold may end at once: a first start, or a loss
 * while nothing ran. Older workers answered the bare list.
 */
export interface RecoveryFigures {
  usage: RecoveredUsage[];
  activeRuns: number;
}

/** The figures of a floor, whichever form the activity answered in (a bare list: open runs unknown). */
export function recoveryFigures(r: RecoveredUsage[] | RecoveryFigures): {
  usage: RecoveredUsage[];
  activeRuns?: number;
} {
  return Array.isArray(r) ? { usage: r } : r;
}

/** `temporal workflow query --workflow-id scheduler --type status` prints the object of GET /v1/admin/scheduler. */
export const statusQuery = defineQuery<SchedulerStatus>('status');
/** For each run id: is it queued or admitted? (A waiting run's check; a query writes no history.) */
export const knowsQuery = defineQuery<boolean[], [string[]]>('knows');
export const explainQuery = defineQuery<(WaitingOn | null)[], [string[]]>('explain');
export const tenantQuery = defineQuery<TenantStatus | null, [string]>('tenant');
/** Many tenants in one query (the API's metrics and console read them all each refresh); read-only. */
export const tenantsQuery = defineQuery<(TenantStatus | null)[], [string[]]>('tenants');
/** Whether a batch fits the door now, all or nothing: null, or its refusal (`FleetScheduler.checkBatch`). */
export const batchCheckQuery = defineQuery<
  Refusal | null,
  [{ tenant: string; items: number; costPerItem: number }]
>('batchCheck');
export const ledgerQuery = defineQuery<LedgerEntry[], [string, number]>('ledger');

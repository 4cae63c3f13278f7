import {
  allHandlersFinished,
  condition,
  patched,
  setCurrentDetails,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULT_GOVERNOR, DEFAULT_INTERACTIVE_RESERVE, FleetScheduler } from '../scheduler';
import type { SchedulerSnapshot } from '../scheduler';
import type { SettingsPatch } from '../scheduler/fleet-settings';
import type { FleetSettings, GovernorParams, SchedulerStatus } from '../scheduler/types';
import { sendAdmissions, sendBudgetRefusals, sendRevocations } from './scheduler-notices';
import { SchedulerRecovery } from './scheduler-recovery';
import { PATCH } from './patches';
import { applyReport, reportsOnce, summaryLine, timerToArm } from './scheduler-support';
import { pullReports } from './scheduler-activities';
import type { WorkerReport } from '../contract/scheduler-messages';
import { SchedulerWork } from './scheduler-work';

export interface SchedulerInput {
  settings: FleetSettings;
  governor?: GovernorParams;
  snapshot?: SchedulerSnapshot;
  continuedAsNew?: number;
  /**
   * What the operator set at runtime, from the store outside the chain (the drain with its intake,
   * the settings patches merged): a chain started without a snapshot begins with it, so a lost
   * scheduler's successor is drained, and patched, from its first admission round.
   */
  operator?: { drain: 'refuse' | 'hold' | null; settings: SettingsPatch };
  /** Continue-as-new after this many history events even before the server suggests it (tests, drills). */
  maxHistoryEvents?: number;
  /** The report log's cursor the chain booked up to (absent: a new chain begins where the log was last acknowledged). */
  reportCursor?: number;
}

/**
 * One run of the scheduler chain: the pure core, the work its handlers and loop share, the
 * recovery. `schedulerWorkflow` wires its handlers and drives `pass` until the chain must continue.
 */
export class SchedulerManager {
  readonly core: FleetScheduler;
  readonly work = new SchedulerWork();
  readonly recovery: SchedulerRecovery;
  private timerAt: number | null = null;
  /**
   * The loop ended: the chain waits for its notices, then continues-as-new. A submit now admits
   * nothing at once (no pass is left to tell the round's other admissions).
   */
  closing = false;
  private lastDetails = '';
  /** Books a worker report once in this run, however it came (update, signal, pull). */
  readonly onReport: (report: WorkerReport) => void;
  /** Whether this run pulls the report log (false only replaying a run begun before the pull). */
  private readonly pulls: boolean;
  private pulling = false;
  private reportCursor: number | null;

  constructor(private readonly input: SchedulerInput) {
    this.core = input.snapshot
      ? FleetScheduler.restore(input.snapshot)
      : FleetScheduler.create(
          { settings: input.settings, governor: input.governor ?? DEFAULT_GOVERNOR },
          Date.now(),
        );
    // Settings without an interactive reserve take the default.
    const chainSettings = input.snapshot?.settings ?? input.settings;
    if (chainSettings.interactiveReserve === undefined)
      this.core.patchSettings({ interactiveReserve: DEFAULT_INTERACTIVE_RESERVE });
    if (!input.snapshot && input.operator) {
      this.core.patchSettings(input.operator.settings);
      if (input.operator.drain) this.core.drain(input.operator.drain, Date.now());
    }
    this.recovery = new SchedulerRecovery(this.core, this.work);
    this.recovery.begin(input.snapshot !== undefined);
    this.onReport = reportsOnce((report) => {
      if (applyReport(this.core, report, Date.now())) this.work.touch();
    });
    this.reportCursor = input.reportCursor ?? null;
    this.pulls = patched(PATCH.reportsByPull.id);
  }

  get continuedAsNew(): number {
    return this.input.continuedAsNew ?? 0;
  }

  status(): SchedulerStatus {
    return {
      ...this.core.status(Date.now()),
      history: { length: workflowInfo().historyLength, continuedAsNew: this.continuedAsNew },
    };
  }

  shouldContinueAsNew(): boolean {
    const info = workflowInfo();
    const max = this.input.maxHistoryEvents;
    return info.continueAsNewSuggested || (max !== undefined && info.historyLength >= max);
  }

  /**
   * Waits until something changes (or the core's next wake-up time comes); call only when not dirty.
   * Returns `condition`'s own promise (no async wrapper): the loop resumes at the same point of the
   * activation as it always has, which keeps its commands in the recorded order.
   */
  idle(): Promise<void> {
    this.work.watch.assertInTask();
    this.armTimer(this.core.nextWakeAt(Date.now()));
    return condition(() => {
      this.work.watch.see();
      return this.work.dirty || this.shouldContinueAsNew();
    });
  }

  /** One pass: the floor if one is wanted, expired leases, uncoverable units, admissions. */
  pass(): void {
    this.work.watch.assertInTask();
    this.work.dirty = false;
    const now = Date.now();
    this.recovery.takeFloor(now);
    sendRevocations(this.work, this.core.expireLeases(now));
    // Queued units their tenant's budget can no longer cover end now (budget_exhausted), not when
    // the period rolls.
    sendBudgetRefusals(this.work, this.core.refuseUncoverable(now));
    const admissions = this.work.admitted.concat(this.core.admit(now));
    this.work.admitted = [];
    if (admissions.length > 0) sendAdmissions(this.work, this.core, admissions);
    this.pullReports();
    const details = summaryLine(this.core.summary(now));
    if (details !== this.lastDetails) setCurrentDetails((this.lastDetails = details));
  }

  /**
   * Lets in-flight notices and handlers finish so nothing is lost between runs of the chain, for at
   * most a minute: a notice that cannot be delivered (no worker) must not hold the chain. An admission
   * it abandons is not lost: its lease expires, and the run re-offers itself. `condition`'s own
   * promise, like `idle`.
   */
  settled(): Promise<boolean> {
    this.work.watch.assertInTask();
    this.closing = true;
    return condition(() => this.work.pending === 0 && allHandlersFinished(), '1 minute');
  }

  /** The next run's input. Long-idle tenants leave the core first (the API re-sends a tenant it no longer knows): the input stays bounded. */
  nextInput(): SchedulerInput {
    this.core.evictIdle(Date.now());
    // The snapshot carries the operator's state on.
    const { operator: _operator, ...rest } = this.input;
    return {
      ...rest,
      snapshot: this.core.snapshot(),
      continuedAsNew: this.continuedAsNew + 1,
      ...(this.reportCursor !== null ? { reportCursor: this.reportCursor } : {}),
    };
  }

  /**
   * Keeps one pull of the report log in flight while the loop runs. Its reports are booked and the
   * cursor moved in the same step, before the pull counts as settled, so the cursor continue-as-new
   * carries on is that of the last report booked, and the next pull acknowledges exactly that. The
   * chain waits for the pull in flight before it continues as new (at most REPORT_PULL_WAIT_MS, and a
   * pull returns as soon as a report is logged): a pull cancelled instead would complete during the
   * continue-as-new task and fail it (UnhandledCommand), replaying the whole run.
   */
  private pullReports(): void {
    if (!this.pulls || this.pulling || this.closing) return;
    this.pulling = true;
    this.work.track(
      pullReports({ schedulerId: workflowInfo().workflowId, after: this.reportCursor })
        .then((r) => {
          for (const report of r.reports) this.onReport(report);
          this.reportCursor = r.after;
        })
        .finally(() => (this.pulling = false)),
    );
  }

  /**
   * One timer per wake-up time, never cancelled: a `condition` with a timeout would start and cancel
   * a timer on every loop (two history events each time), and history is the scheduler's budget.
   * Whether the last timer is still pending is read from workflow time (`timerToArm`), not from its
   * callback having run: a worker can miss a fired timer's event (one it took as already applied)
   * that a replay applies, and the timers started must not differ between the two.
   */
  private armTimer(wake: number | null): void {
    const now = Date.now();
    const due = patched(PATCH.wakeTimerByTime.id)
      ? timerToArm(this.timerAt, wake, now)
      : wake === null || (this.timerAt !== null && this.timerAt <= wake)
        ? null
        : wake;
    if (due === null) return;
    const at = (this.timerAt = due);
    void sleep(Math.max(1, at - now)).then(() => {
      if (this.timerAt === at) this.timerAt = null;
      this.work.touch();
    });
  }
}

import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Charge, ModelObservation, Release, Renewal } from '../scheduler/types';
import { reportSignal, reportUpdate } from '../contract/scheduler-messages';
import type { WorkerReport } from '../contract/scheduler-messages';
import type { StepRequest } from '../contract/activity-types';
import type { ReportLog } from '../stores/report-log/report-log';
import { RenewalSpacing } from './renewal-spacing';
import { schedulerUpdates } from './scheduler-updates';
import type { PermitGate } from './scheduler-updates';

/** Windows kept while the scheduler is unreachable; older ones are stale news and dropped. */
const MAX_UNSENT_OBSERVATIONS = 20;
/** Settled charge ids per report; the rest go with the next one. */
const MAX_CONFIRMS_PER_REPORT = 2_000;
/** How long settled charge ids wait for other news before they go in a report of their own. */
const CONFIRMS_ALONE_MS = 5_000;
/** Longest pause between attempts while the scheduler does not answer (the watchdog restarts it). */
const MAX_BACKOFF_MS = 10_000;
/** How long reports go as signals after the scheduler was found without the update handler (a deploy under way). */
const SIGNAL_FALLBACK_MS = 60_000;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** One report on its way: sent again as it is, under its id (`report.id`), until it is delivered. */
interface Outgoing {
  report: WorkerReport & { id: string };
  waiters: Waiter[];
  keyed: Charge[];
}

/** This worker began to stop while its report update was on its way (see `deliver`). */
class Stopping extends Error {}

/** How often a report update on its way checks whether this worker began to stop. */
const STOPPING_POLL_MS = 100;

/** The scheduler's code has no handler for the update (a worker of an older version ran it). */
export const noUpdateHandler = (err: unknown): boolean =>
  err instanceof WorkflowUpdateFailedError &&
  /No registered handler for update/.test(err.cause?.message ?? err.message);

/**
 * The worker's one channel into the scheduler. Releases, renewals, cancellations and model
 * observations from every run on this worker are coalesced into one report per flush, because one
 * workflow absorbs only a limited rate of messages (see docs/temporal-facts.md). A report is a
 * `workerReport` update with an id of its own: a signal arriving during the scheduler's
 * continue-as-new would fail that task, an update is handed back and sent to the next run
 * (scheduler-messages.ts). One report is in flight at a time; one that failed is sent again as it
 * was, under its id (the server answers a repeat to the same run once), before anything newer.
 * A release resolves only once its report is in the scheduler's history.
 */
export class SchedulerMailbox {
  /** Billed tokens per run attempt (key `tenant\u0000runId\u0000attempt`) of unkeyed charges, summed until the next flush. */
  private charges = new Map<string, Charge>();
  /** Charges naming their call's key, one per call (the ledger books each key once). */
  private keyed: Charge[] = [];
  /** Hears the keyed charges of every report delivered to the scheduler (and those of nothing to deliver). */
  onCharged: ((delivered: Charge[]) => void) | undefined;
  /** Charge ids settled durably since the last report: the scheduler may forget them. */
  private confirms: string[] = [];
  /** When the oldest of `confirms` came: alone, they wait up to CONFIRMS_ALONE_MS for other news. */
  private confirmsSince = 0;
  /** Owners this worker's sweep fenced (`ownerId`), sent with the next report. */
  private fences: string[] = [];
  private releases: Release[] = [];
  private cancels: string[] = [];
  private unreachable: { runId: string; attempt: number }[] = [];
  /** Renewals, at most one per lease per its gap (a third of its TTL). */
  private renewals = new RenewalSpacing();
  /** Model windows not sent yet (kept while the scheduler is unreachable), so a throttle is never lost. */
  private unsent: ModelObservation[] = [];
  /** A report whose delivery failed: the next flush sends it again, as it is. */
  private resend: Outgoing | undefined;
  /** Report ids: this mailbox's own prefix and a sequence number. */
  private readonly idPrefix = randomUUID().slice(0, 8);
  private seq = 0;
  /** Until then reports go as signals (the scheduler was found without the update handler). */
  private signalsUntil = 0;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /**
   * The report log (`REPORTS=pull`): reports are appended there under their id and the scheduler
   * pulls them; a report is delivered once it is durable there. Undefined: reports go as updates.
   */
  logTo: ReportLog | undefined;
  /** The fleet's permits on workers' updates (WORKER_UPDATE_PERMITS): a report update holds one. */
  permits: PermitGate | undefined;
  /** Consecutive failed flushes, and when the next attempt may go (backoff ×2 up to MAX_BACKOFF_MS). */
  private failures = 0;
  private notBefore = 0;

  constructor(
    private readonly client: Client,
    private readonly schedulerId: string,
    private readonly flushMs: number,
    /** What the worker's model calls showed since the last take: one observation per model pool. */
    private readonly observations: () => ModelObservation[],
    private readonly log: Logger,
    /**
     * True once this worker stops: it no longer takes workflow tasks, so an update may find no worker
     * to run the scheduler's task (the only one, or the last of a fleet being deployed) and never be
     * answered, holding every release behind it. From then on reports go as signals, which the server
     * records without a worker; an update on its way is sent again as a signal (same id).
     */
    private readonly stopping: () => boolean = () => false,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  release(r: Release): Promise<void> {
    this.releases.push(r);
    this.renewals.drop(r.runId);
    return this.awaitFlush();
  }

  /**
   * Books a call's billed tokens; fire-and-forget like a renewal, but never dropped (a failed flush
   * keeps it). A charge with a `key` goes as it is and is handed to `onCharged` once delivered.
   */
  charge(c: Charge): void {
    if (c.key !== undefined) {
      this.keyed.push({ ...c });
      return;
    }
    if (!(c.tokens > 0)) return;
    const key = `${c.tenant}\u0000${c.runId}\u0000${c.attempt}`;
    const prev = this.charges.get(key);
    this.charges.set(key, prev ? { ...prev, tokens: prev.tokens + c.tokens } : { ...c });
  }

  /** Tells the scheduler, with the next report, that these charge ids are settled durably. */
  confirm(ids: readonly string[]): void {
    if (!this.confirms.length) this.confirmsSince = Date.now();
    this.confirms.push(...ids);
  }

  /** Tells the scheduler, no later than the charges sent after this, that these owners are fenced. */
  fence(ids: readonly string[]): void {
    this.fences.push(...ids);
  }

  cancel(runId: string): Promise<void> {
    this.cancels.push(runId);
    return this.awaitFlush();
  }

  /**
   * Renewals are fire-and-forget: the newest per run wins, and a lost one only shortens a lease. One
   * goes per lease per `gapMs` (give a third of the lease's TTL; 0: with the next report).
   */
  renew(r: Renewal, gapMs = 0): void {
    this.renewals.add(r, gapMs);
  }

  private awaitFlush(): Promise<void> {
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Takes everything pending as one report, or null when there is nothing to send. */
  private take(force: boolean): Outgoing | null {
    this.unsent.push(...this.observations());
    const renewals = this.renewals.due(Date.now());
    const report: WorkerReport = {};
    // A keyed charge of nothing (a call billed 0 tokens) has nothing to deliver: handed back as it is.
    const sent = this.keyed.filter((c) => c.tokens !== 0);
    const nothing = this.keyed.filter((c) => c.tokens === 0);
    this.keyed = [];
    if (this.charges.size || sent.length) report.charges = [...this.charges.values(), ...sent];
    if (this.fences.length) report.fenced = this.fences.splice(0);
    const alone =
      !this.charges.size && !sent.length && !report.fenced && !this.releases.length && !this.cancels.length;
    const waitMore =
      alone &&
      !force &&
      !this.unreachable.length &&
      !renewals.length &&
      !this.unsent.length &&
      Date.now() - this.confirmsSince < CONFIRMS_ALONE_MS;
    if (this.confirms.length && !waitMore) report.settled = this.confirms.splice(0, MAX_CONFIRMS_PER_REPORT);
    if (this.releases.length) report.releases = this.releases;
    if (this.cancels.length) report.cancels = this.cancels;
    if (this.unreachable.length) report.unreachable = this.unreachable;
    if (renewals.length) report.renewals = renewals;
    if (this.unsent.length) report.observations = this.unsent.slice(-MAX_UNSENT_OBSERVATIONS);
    if (nothing.length) this.onCharged?.(nothing);
    if (Object.keys(report).length === 0) return null;
    const out: Outgoing = {
      report: { ...report, id: `report-${this.idPrefix}-${++this.seq}` },
      waiters: this.waiters,
      keyed: sent,
    };
    this.charges = new Map();
    this.releases = [];
    this.cancels = [];
    this.unreachable = [];
    this.unsent = [];
    this.waiters = [];
    return out;
  }

  /**
   * Delivers one report: appended to the report log, or an update under its id, or a signal while
   * this worker stops or the scheduler lacks the handler. The scheduler applies a report id once per
   * run, whichever way it came.
   */
  private async deliver(out: Outgoing): Promise<void> {
    if (this.logTo)
      return this.logTo.append(this.schedulerId, out.report.id, JSON.stringify(out.report), Date.now());
    const handle = this.client.workflow.getHandle(this.schedulerId);
    if (this.stopping() || Date.now() < this.signalsUntil) return handle.signal(reportSignal, out.report);
    // A wait for a permit ends when the worker stops: the report then goes as a signal.
    const gaveUp = new AbortController();
    const opts = { updateId: out.report.id, ...(this.permits ? { signal: gaveUp.signal } : {}) };
    try {
      const update = schedulerUpdates(this.client, this.schedulerId, this.permits);
      await this.unlessStopping(update(reportUpdate, [out.report], opts));
    } catch (err) {
      gaveUp.abort();
      if (err instanceof Stopping) return handle.signal(reportSignal, out.report);
      if (!noUpdateHandler(err)) throw err;
      this.signalsUntil = Date.now() + SIGNAL_FALLBACK_MS;
      this.log.warn('the scheduler has no workerReport update handler (older code): reporting by signal');
      await handle.signal(reportSignal, out.report);
    }
  }

  /** `p`, or a `Stopping` rejection as soon as this worker begins to stop (`p` is then left to itself). */
  private unlessStopping<T>(p: Promise<T>): Promise<T> {
    p.catch(() => undefined);
    return new Promise<T>((resolve, reject) => {
      const timer = setInterval(() => {
        if (!this.stopping()) return;
        clearInterval(timer);
        reject(new Stopping('worker stopping'));
      }, STOPPING_POLL_MS);
      p.then(resolve, reject).finally(() => clearInterval(timer));
    });
  }

  /** Sends a failed report again, or everything pending as one report; on failure keeps it for the next tick. */
  async flush(force = false): Promise<void> {
    if (this.flushing) return this.flushing;
    // A missing or unreachable scheduler is retried with backoff, not at full speed; what is pending
    // is kept (a new chain takes releases it holds no lease for, and charges them once).
    if (!force && Date.now() < this.notBefore) return;
    const out = this.resend ?? this.take(force);
    this.resend = undefined;
    if (!out) return;
    this.flushing = this.deliver(out)
      .then(
        () => {
          this.failures = 0;
          this.notBefore = 0;
          out.waiters.forEach((w) => w.resolve());
          if (out.keyed.length) this.onCharged?.(out.keyed);
        },
        (err: unknown) => {
          this.failures++;
          const backoff = Math.min(MAX_BACKOFF_MS, this.flushMs * 2 ** this.failures);
          this.notBefore = Date.now() + backoff;
          this.log.warn(
            { err: String(err), failures: this.failures, retryInMs: backoff },
            'scheduler report failed; retrying with backoff',
          );
          this.resend = out;
        },
      )
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Flushes what is pending and stops the timer (worker shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush(true);
    // A report sent again, then what came meanwhile: at most two more.
    if (this.resend || this.waiters.length) await this.flush(true);
    if (this.waiters.length) await this.flush(true);
  }
}

/** The least time between two renewals of one lease from a worker: a third of the lease's TTL. */
export const renewalGapMs = (req: { leaseTtlMs: number }): number => req.leaseTtlMs / 3;

/**
 * What a run's renewals say of it (besides its use): who it is, so a scheduler that lost its lease
 * takes the run back in its tenant, lane and model pool.
 */
export function renewalOf(
  req: Pick<StepRequest, 'runId' | 'attempt' | 'tenant' | 'priority' | 'cost' | 'pool'>,
) {
  return {
    runId: req.runId,
    attempt: req.attempt,
    perCall: true,
    ...(req.tenant ? { tenant: req.tenant } : {}),
    ...(req.priority ? { priority: req.priority } : {}),
    ...(req.cost !== undefined ? { cost: req.cost } : {}),
    ...(req.pool ? { pool: req.pool } : {}),
  };
}

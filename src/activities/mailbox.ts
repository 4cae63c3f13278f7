import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Charge, ModelObservation, Release, Renewal } from '../scheduler/types';
import { reportSignal } from '../workflows/scheduler-messages';
import type { WorkerReport } from '../workflows/scheduler-messages';

/** Windows kept while the scheduler is unreachable; older ones are stale news and dropped. */
const MAX_UNSENT_OBSERVATIONS = 20;
/** Longest pause between attempts while the scheduler does not answer (the watchdog restarts it). */
const MAX_BACKOFF_MS = 10_000;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The worker's one channel into the scheduler. Releases, renewals, cancellations and model
 * observations from every run on this worker are coalesced into one `report` signal per flush,
 * because one workflow absorbs only a limited rate of signals (see docs/temporal-facts.md).
 * A release resolves only once its signal is durably in the scheduler's history.
 */
export class SchedulerMailbox {
  /** Billed tokens per run attempt (key `tenant\u0000runId\u0000attempt`), summed until the next flush. */
  private charges = new Map<string, Charge>();
  /** The call intent keys of the pending charges (settled once a report carrying them is delivered). */
  private chargeKeys: string[] = [];
  /** Hears the call intent keys of every report delivered to the scheduler. */
  onCharged: ((keys: string[]) => void) | undefined;
  private releases: Release[] = [];
  private cancels: string[] = [];
  private unreachable: { runId: string; attempt: number }[] = [];
  private renewals = new Map<string, Renewal>();
  /** Model windows whose signal failed: sent with the next one, so a throttle is never lost. */
  private unsent: ModelObservation[] = [];
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** Consecutive failed flushes, and when the next attempt may go (backoff ×2 up to MAX_BACKOFF_MS). */
  private failures = 0;
  private notBefore = 0;

  constructor(
    private readonly client: Client,
    private readonly schedulerId: string,
    private readonly flushMs: number,
    private readonly observations: () => ModelObservation | null,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  release(r: Release): Promise<void> {
    this.releases.push(r);
    this.renewals.delete(r.runId);
    return this.awaitFlush();
  }

  /**
   * Books a call's billed tokens; fire-and-forget like a renewal, but never dropped (a failed flush
   * keeps it). `keys`: the calls' intent keys, handed to `onCharged` once the charge is delivered.
   */
  charge(c: Charge, keys: readonly string[] = []): void {
    this.chargeKeys.push(...keys);
    if (!(c.tokens > 0)) return;
    const key = `${c.tenant}\u0000${c.runId}\u0000${c.attempt}`;
    const prev = this.charges.get(key);
    this.charges.set(key, prev ? { ...prev, tokens: prev.tokens + c.tokens } : { ...c });
  }

  cancel(runId: string): Promise<void> {
    this.cancels.push(runId);
    return this.awaitFlush();
  }

  /** Renewals are fire-and-forget: the newest per run wins, and a lost one only shortens a lease. */
  renew(r: Renewal): void {
    this.renewals.set(r.runId, r);
  }

  private awaitFlush(): Promise<void> {
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Sends everything pending as one signal; on failure keeps it for the next tick. */
  async flush(force = false): Promise<void> {
    if (this.flushing) return this.flushing;
    // A missing or unreachable scheduler is retried with backoff, not at full speed; what is pending
    // is kept (a new chain takes releases it holds no lease for, and charges them once).
    if (!force && Date.now() < this.notBefore) return;
    const observation = this.observations();
    if (observation) this.unsent.push(observation);
    const report: WorkerReport = {};
    if (this.charges.size) report.charges = [...this.charges.values()];
    if (this.releases.length) report.releases = this.releases;
    if (this.cancels.length) report.cancels = this.cancels;
    if (this.unreachable.length) report.unreachable = this.unreachable;
    if (this.renewals.size) report.renewals = [...this.renewals.values()];
    if (this.unsent.length) report.observations = this.unsent.slice(-MAX_UNSENT_OBSERVATIONS);
    if (Object.keys(report).length === 0) {
      // Keys of calls that billed nothing: nothing to deliver, settled as they are.
      if (this.chargeKeys.length) this.onCharged?.(this.chargeKeys.splice(0));
      return;
    }
    const waiters = this.waiters;
    const keys = this.chargeKeys;
    this.chargeKeys = [];
    this.charges = new Map();
    this.releases = [];
    this.cancels = [];
    this.unreachable = [];
    this.renewals = new Map();
    this.unsent = [];
    this.waiters = [];
    this.flushing = this.client.workflow
      .getHandle(this.schedulerId)
      .signal(reportSignal, report)
      .then(
        () => {
          this.failures = 0;
          this.notBefore = 0;
          waiters.forEach((w) => w.resolve());
          if (keys.length) this.onCharged?.(keys);
        },
        (err: unknown) => {
          this.failures++;
          const backoff = Math.min(MAX_BACKOFF_MS, this.flushMs * 2 ** this.failures);
          this.notBefore = Date.now() + backoff;
          this.log.warn(
            { err: String(err), failures: this.failures, retryInMs: backoff },
            'scheduler report failed; retrying with backoff',
          );
          for (const c of report.charges ?? []) this.charge(c);
          this.chargeKeys.push(...keys);
          this.releases.push(...(report.releases ?? []));
          this.cancels.push(...(report.cancels ?? []));
          this.unreachable.push(...(report.unreachable ?? []));
          for (const r of report.renewals ?? [])
            if (!this.renewals.has(r.runId)) this.renewals.set(r.runId, r);
          this.unsent.unshift(...(report.observations ?? []));
          this.waiters.push(...waiters);
        },
      )
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Flushes what is pending and stops the timer (worker shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush(true);
    if (this.waiters.length) await this.flush(true);
  }
}

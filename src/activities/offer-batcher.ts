import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { UnitSubmission } from '../scheduler/types';
import { knowsQuery, submitUpdate } from '../contract/scheduler-messages';
import type { OfferResult } from '../contract/activity-types';
import type { SchedulerUpdate } from './scheduler-updates';

interface Pending {
  unit: UnitSubmission;
  resolve(r: OfferResult): void;
}

/** Retry-After when the scheduler did not answer: the watchdog restarts a lost one within seconds. */
const UNAVAILABLE_RETRY_SECONDS = 10;
const MAX_PER_MESSAGE = 1000;
/**
 * A check waits at most this long: an update waits for the scheduler's workflow task, which may never
 * come from this worker (it is stopping) or soon from any (none is polling). The runs then try again.
 */
const CHECK_TIMEOUT_MS = 60_000;

/**
 * Batches waiting runs' checks from one worker: one `knows` query (no history on the scheduler) for
 * all runs that checked in the last `lingerMs`, then one `submit` update for the ones it did not know.
 * A run known to the scheduler costs it nothing.
 */
export class OfferBatcher {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Client,
    private readonly schedulerId: string,
    /** The worker's scheduler updates, each under a permit of the fleet's (`schedulerUpdates`). */
    private readonly update: SchedulerUpdate,
    private readonly log: Logger,
    /** Sends a tenant the scheduler does not know from the tenant store; false when there is none. */
    private readonly resync: (tenant: string) => Promise<boolean> = async () => false,
    private readonly lingerMs = 50,
  ) {}

  offer(unit: UnitSubmission): Promise<OfferResult> {
    return new Promise((resolve) => {
      this.queue.push({ unit, resolve });
      this.timer ??= setTimeout(() => void this.flush(), this.lingerMs);
    });
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_PER_MESSAGE);
      const results = await this.client
        .withAbortSignal(AbortSignal.timeout(CHECK_TIMEOUT_MS), () => this.check(batch.map((p) => p.unit)))
        .catch((err: unknown) => {
          const missing = err instanceof WorkflowNotFoundError;
          this.log.warn({ err: String(err), missing }, 'runs could not check on the scheduler');
          return batch.map(() => ({
            state: 'unavailable' as const,
            retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS,
          }));
        });
      batch.forEach((p, i) => p.resolve(results[i]!));
    }
  }

  private async check(units: UnitSubmission[]): Promise<OfferResult[]> {
    const handle = this.client.workflow.getHandle(this.schedulerId);
    const known = await handle.query(
      knowsQuery,
      units.map((u) => u.runId),
    );
    const unknown = units.filter((_, i) => !known[i]);
    const submitted = unknown.length > 0 ? await this.update(submitUpdate, [unknown]) : [];
    const byRun = new Map(submitted.map((r) => [r.runId, r]));
    // A run waiting outside the scheduler (at a gate, or refused for now) finds its tenant evicted:
    // the tenant comes back from the store, and its runs are offered once more.
    const lost = unknown.filter((u) => {
      const r = byRun.get(u.runId);
      return r !== undefined && !r.accepted && r.code === 'unknown_tenant';
    });
    const back = new Set<string>();
    for (const tenant of new Set(lost.map((u) => u.tenant))) if (await this.resync(tenant)) back.add(tenant);
    const again = lost.filter((u) => back.has(u.tenant));
    if (again.length > 0) for (const r of await this.update(submitUpdate, [again])) byRun.set(r.runId, r);
    return units.map((u, i): OfferResult => {
      if (known[i]) return { state: 'known', retryAfterSeconds: 0 };
      const r = byRun.get(u.runId);
      if (!r) return { state: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS };
      if (!r.accepted)
        return { state: 'refused', retryAfterSeconds: r.retryAfterSeconds, code: r.code, message: r.message };
      return { state: r.duplicate ? 'ended' : 'queued', retryAfterSeconds: 0 };
    });
  }
}

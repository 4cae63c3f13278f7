import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { SchedulerInput } from '../workflows/scheduler';
import { recoverSignal, statusQuery } from '../contract/scheduler-messages';
import { reofferSignal } from '../contract/run-messages';
import { ensureScheduler } from './scheduler-handle';
import type { OperatorStateSource } from './scheduler-handle';
import { mapLimit } from '../util/map-limit';
import { signalRun } from '../activities/wake-run';
import { fleetRunsClause } from './run-queues';

/**
 * Signals every queued run of this fleet (visibility: RunStatus 'queued') to check on the scheduler
 * now: queued runs come back into line within seconds of a recovery instead of at their next backoff.
 */
async function nudgeQueuedRuns(client: Client, config: Config, log: Logger): Promise<void> {
  const query =
    fleetRunsClause(config.temporal.taskQueue) + ` AND RunStatus = 'queued' AND ExecutionStatus = 'Running'`;
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query, pageSize: 1000 })) ids.push(wf.workflowId);
  // A queued run may wait out a start delay, which the nudge ends (wake-run.ts).
  await mapLimit(ids, 16, (id) => signalRun(client, id, reofferSignal).catch(() => undefined));
  log.warn({ runs: ids.length }, 'queued runs told to re-offer themselves to the new scheduler chain');
}

/**
 * After a recovery, the floor is taken again at these multiples of the lease TTL (at least 10 s):
 * runs that were in flight when the chain was lost had part of their usage in the lost ledger, and
 * visibility shows that usage only once they have closed, so a single floor taken at once would
 * miss it. The scheduler takes these follow-ups on its own timers too
 * (`src/workflows/scheduler-recovery.ts`); the watchdog's are reminders, for a chain that
 * continued-as-new meanwhile.
 */
export const RECOVERY_FOLLOW_UPS = [1, 2, 4, 8, 16] as const;

export interface Watchdog {
  /** One check now (tests); resolves when done. */
  check(): Promise<void>;
  stop(): void;
}

/** Monotonic progress of the chain: it only goes backwards when the chain was reset to an earlier point. */
function progress(c: Record<string, unknown>): number {
  const n = (k: string) => (typeof c[k] === 'number' ? c[k] : 0);
  return n('submitted') + n('admitted') + n('completed') + n('failed') + n('cancelled');
}

/**
 * Keeps the fleet's scheduler alive without any process restarting. Every `watchdogSeconds` it
 * describes the scheduler workflow (never queries it on this path: only when the run id it sees
 * changes, once, does it read the counters); when it is not running (terminated, failed, timed out, or never
 * started) it starts a new chain under the same id (idempotent: every API and worker process runs a
 * watchdog, the first start wins, the others find it running), drained and patched as the operator
 * left it (`operator`, read before the start). When the chain is new, or its
 * counters went backwards (it was reset to an earlier point), `onNewChain` runs (the API re-sends its
 * tenants) and the scheduler is asked to `recover`: it raises each tenant's `spent` to what finished
 * runs used in the period (from visibility). Queued runs come back by themselves (they re-offer
 * themselves) and running runs regain their leases with their next renewal.
 */
export function startSchedulerWatchdog(opts: {
  client: Client;
  config: Config;
  log: Logger;
  extra?: Partial<SchedulerInput>;
  /** The operator's drain and settings (the scheduler state store): a chain it starts begins with them. */
  operator?: OperatorStateSource;
  onNewChain?: () => Promise<unknown>;
  /** Tell queued runs to check on the new chain now rather than at their next backoff (one process does). */
  nudgeQueuedRuns?: boolean;
  /** The clock (tests). */
  now?: () => number;
}): Watchdog {
  const { client, config, log } = opts;
  const handle = () => client.workflow.getHandle(config.schedulerWorkflowId);
  let last = -1;
  let chain: string | undefined;
  /** The run last seen; the counters are read (queried) only when it changes. */
  let runId: string | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  /** When the floor is to be taken again (ms since epoch, ascending). */
  let followUps: number[] = [];
  const now = opts.now ?? Date.now;
  /**
   * The check's describe and query give up after this long: one that hangs (a query caught in a
   * chain being lost) must not hold every later check, or a chain started elsewhere goes unnoticed.
   */
  const callMs = Math.max(10_000, 5 * config.watchdogSeconds * 1000);
  const bounded = <T>(call: () => Promise<T>): Promise<T> =>
    client.withAbortSignal(AbortSignal.timeout(callMs), call);

  /** The recovery still owed (its reason): one that failed part-way runs again, whole, at each check until it completes. */
  let owed: string | undefined;
  const recover = async (why: string) => {
    owed = why;
    log.warn({ scheduler: config.schedulerWorkflowId, why }, 'scheduler chain recovering');
    await opts.onNewChain?.();
    await handle().signal(recoverSignal);
    const step = Math.max(10, config.fleet.leaseTtlSeconds) * 1000;
    const at = now();
    followUps = RECOVERY_FOLLOW_UPS.map((k) => at + k * step);
    if (opts.nudgeQueuedRuns) await nudgeQueuedRuns(client, config, log);
    owed = undefined;
  };

  /** Takes the floor again when a follow-up is due (the recover signal is idempotent: a floor). */
  const followUp = async () => {
    if (followUps.length === 0 || now() < followUps[0]!) return;
    followUps = followUps.filter((t) => t > now());
    log.info({ left: followUps.length }, 'scheduler recovery: taking the usage floor again');
    // Only the floor: a follow-up must not hold the chain's budgeted tenants again.
    await handle().signal(recoverSignal, { followUp: true });
  };

  const once = async (): Promise<void> => {
    // `describe` needs no worker and costs the workflow nothing (a query would take a slot in its
    // query buffer every tick, from every process): it is all the hot path asks.
    const d = await bounded(() => handle().describe()).catch((err: unknown) =>
      err instanceof WorkflowNotFoundError ? null : Promise.reject(err),
    );
    const status = d?.status.name ?? 'ABSENT';
    if (status !== 'RUNNING') {
      await ensureScheduler(client, config, opts.extra, opts.operator);
      last = -1;
      chain = undefined;
      runId = undefined;
      await recover(`scheduler was ${status}; started a new chain`);
      return;
    }
    // Owed until it completes: the tenant sync waits for a worker that may not be up yet, and only the
    // nudge brings the runs queued in the chain it replaced back within seconds.
    if (owed !== undefined) await recover(owed);
    // Same run as last time: nothing can have been reset or replaced.
    if (d?.runId === runId) return followUp();
    // A new run (continue-as-new, a reset, or a chain another process started): one query, only now.
    // A server that does not fill in the first run id answers '' for it.
    const first = d?.raw.workflowExecutionInfo?.firstRunId || undefined;
    const st = await bounded(() => handle().query(statusQuery));
    const p = progress(st.counters);
    // A chain another process started is new: its first run differs from the one seen before, or
    // (without first run ids) a run other than the one seen before has never continued-as-new.
    const fresh = runId !== undefined && st.history.continuedAsNew === 0;
    if ((chain !== undefined && first !== undefined && first !== chain) || fresh)
      await recover('a new scheduler chain was started elsewhere');
    else if (last >= 0 && p < last) await recover(`scheduler counters went back (${last} → ${p}): reset`);
    last = p;
    runId = d?.runId;
    chain = first ?? chain;
  };

  const check = (): Promise<void> => {
    running ??= once()
      .catch((err: unknown) => log.warn({ err: String(err) }, 'scheduler watchdog check failed'))
      .finally(() => (running = undefined));
    return running;
  };

  const timer = setInterval(() => {
    if (!stopped) void check();
  }, config.watchdogSeconds * 1000);
  timer.unref();
  return {
    check,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

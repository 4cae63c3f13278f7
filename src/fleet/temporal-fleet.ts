import { WorkflowNotFoundError } from '@temporalio/client';
import type {
  Client,
  QueryDefinition,
  WorkflowExecutionDescription,
  WorkflowHandle,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { EffectStore } from '../stores/effects/effect-store';
import { ApiError } from '../contract/errors';
import { withTimeout } from '../util/with-timeout';
import { batchTotal } from '../contract/fleet-port';
import type { BatchView, FleetPort, RunView } from '../contract/fleet-port';
import type { Config } from '../config';
import type { batchWorkflow } from '../workflows/batch';
import { cancelRunSignal, decisionSignal, runSpecQuery, runViewQuery } from '../contract/run-messages';
import {
  batchCheckQuery,
  drainUpdate,
  explainQuery,
  ledgerQuery,
  patchSettingsUpdate,
  resumeUpdate,
  statusQuery,
  submitUpdate,
  tenantQuery,
  tenantsQuery,
  upsertTenantsUpdate,
} from '../contract/scheduler-messages';
import { PRIORITY_KEY } from './priority-keys';
import { withQueryRetry, withRetry } from './with-retry';
import { mapLimit } from '../util/map-limit';
import { discardRunWorkflow, queuedStartDelayMs, startRunWorkflow } from './start-run';
import { offerRuns } from '../contract/offer-runs';
import { closedRunView } from './closed-run-view';
import { stepsFromHistory } from './run-steps';
import { SubmitCoalescer } from '../activities/submit-coalescer';
import { signalRun } from '../activities/wake-run';
import type { PermitGate } from '../activities/scheduler-updates';
import { readTenantStatuses } from './tenant-statuses';
import { runTaskQueue } from './run-queues';
import { hasWorkflowPollers } from './task-queue-pollers';
import { countBatch, fairnessKeyOf, failedRunIds, listRuns, viewFromDescription } from './visibility';

const notFound = (err: unknown) => err instanceof WorkflowNotFoundError;
/** The longest a run's view query may take before the view comes from its description instead. */
const RUN_QUERY_MS = 5000;
/**
 * An update to the scheduler waits for a worker; without one it would wait forever. Past `ms`
 * (SCHEDULER_ANSWER_SECONDS) the request is answered 503 unavailable with a Retry-After.
 */
const answeredWithin =
  (ms: number) =>
  <T>(p: Promise<T>): Promise<T> =>
    withTimeout(p, ms, 'the scheduler').catch((err: unknown) => {
      if (err instanceof Error && err.message.startsWith('the scheduler timed out')) {
        throw new ApiError(
          'unavailable',
          'The scheduler did not answer in time (is a worker running?); try again shortly.',
          undefined,
          5,
        );
      }
      throw err;
    });
const orNull = <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((err: unknown) => (notFound(err) ? null : Promise.reject(err)));
/** True once a signal is sent; false when its run closed after it was read (not found by then). */
const signalled = (p: Promise<void>): Promise<boolean> =>
  p.then(
    () => true,
    (err: unknown) => (notFound(err) ? false : Promise.reject(err)),
  );

/**
 * A running run's own view, its query bounded at RUN_QUERY_MS: past it (its first workflow task has
 * not run, or its worker is busy) the view its description carries, which needs no worker.
 */
function boundedRunView(
  handle: WorkflowHandle,
  describe: () => Promise<WorkflowExecutionDescription | null>,
): Promise<RunView | null> {
  return withTimeout(handle.query(runViewQuery), RUN_QUERY_MS, 'runView').catch(async (err: unknown) => {
    if (notFound(err)) return null;
    const d = await describe();
    return d ? viewFromDescription(d) : null;
  });
}

/** The fleet on Temporal: the scheduler workflow for decisions, run workflows for runs, visibility for lists. */
export function createTemporalFleet(
  client: Client,
  config: Config,
  effects: EffectStore,
  /** The model pool of an agent's runs (`agentPool`); default: every run in the default pool. */
  poolOf: (agent: string) => string | undefined = () => undefined,
  /**
   * The fleet-wide permits of tenant and operator updates (tenant saves, settings, drain, resume):
   * every API process together has at most OPERATOR_UPDATE_PERMITS of them in flight. None: unbounded.
   */
  operatorUpdates?: Pick<PermitGate, 'hold'>,
): FleetPort {
  const held = <R>(fn: () => Promise<R>): Promise<R> => (operatorUpdates ? operatorUpdates.hold(fn) : fn());
  /** The spec with its agent's pool, unless it names one already (a re-driven run keeps its own). */
  const pooled = <S extends { agent: string; pool?: string }>(spec: S): S => {
    if (spec.pool !== undefined) return spec;
    const pool = poolOf(spec.agent);
    return pool === undefined ? spec : { ...spec, pool };
  };
  const answered = answeredWithin(config.schedulerAnswerMs);
  const scheduler = () => client.workflow.getHandle(config.schedulerWorkflowId);
  /** A read-only query of the scheduler, asked again when refused once (`withQueryRetry`). */
  const ask = <R, A extends unknown[]>(query: QueryDefinition<R, A>, ...args: A): Promise<R> =>
    withQueryRetry(() => scheduler().query(query, ...args));
  const coalescer = new SubmitCoalescer(
    (units) => answered(withRetry(() => scheduler().executeUpdate(submitUpdate, { args: [units] }))),
    { lingerMs: config.submitCoalesceMs, maxUnits: 2000, maxInFlight: 2 },
  );
  const taskQueue = config.temporal.taskQueue;
  /** Why the scheduler holds a queued run; unknown (null) when it does not answer within the bound. */
  const waitingOnOf = (runId: string) =>
    withTimeout(ask(explainQuery, [runId]), RUN_QUERY_MS, 'explain').then(
      ([why]) => why ?? null,
      (err: unknown) => {
        if (err instanceof Error && err.message.startsWith('explain timed out')) return null;
        throw err;
      },
    );

  const fleet: FleetPort = {
    submit: (units) => coalescer.submit(units),
    startRun: (spec, opts) =>
      startRunWorkflow(client, taskQueue, spec, config.runs, {
        ...opts,
        ...(config.queuedStartDelayed ? { delayQueuedMs: queuedStartDelayMs(spec.runId, config.runs) } : {}),
      }),
    discardRun: (runId) => discardRunWorkflow(client, config.temporal.namespace, runId),
    offerRuns: (specs, opts) =>
      offerRuns(fleet, specs.map(pooled), { decideFirst: config.decideFirst, ...opts }),

    async getRun(runId) {
      const handle = client.workflow.getHandle(runId);
      // Described first (no worker needed): a closed run answers from its close event (its result or
      // failure carries the whole view), so reading a finished run replays nothing on any worker.
      const d = await handle.describe().catch((err: unknown) => {
        if (notFound(err)) return null;
        throw err;
      });
      if (!d) return null;
      const closed = d.closeTime ? await closedRunView(handle) : null;
      // A run queued by its search attributes also asks the scheduler why, at the same time as its own
      // query (one after the other, a busy fleet took over 10 s); the answer is bounded like the query.
      const explaining =
        !closed && viewFromDescription(d).status === 'queued' ? waitingOnOf(runId) : undefined;
      explaining?.catch(() => undefined); // awaited below only if the run is still queued
      // A running run answers its query. It needs the run's first workflow task done; right after
      // submission on a busy fleet it may not be yet, and the query waits for that task with no deadline
      // of its own (for as long as the task queue is full): bound it, and answer from what Temporal
      // knows without a worker (search attributes, memo) past the bound.
      const view: RunView | null = closed ?? (await boundedRunView(handle, async () => d));
      // Runs begun before tool calls were recorded answer without the list.
      if (view) view.toolCalls ??= [];
      if (view?.status === 'queued') view.waitingOn = await (explaining ?? waitingOnOf(runId));
      // A run begun before its memo carried the key still shows it while the scheduler explains it.
      if (view) view.fairnessKey = fairnessKeyOf(d) ?? view.waitingOn?.fairnessKey ?? null;
      return view;
    },
    listRuns: (q) => listRuns(client, config.temporal.namespace, taskQueue, q),
    async runSteps(runId) {
      const history = await client.workflow
        .getHandle(runId)
        .fetchHistory()
        .catch((err: unknown) => {
          if (notFound(err)) return null;
          throw err;
        });
      return history ? stepsFromHistory(history.events ?? []) : null;
    },

    async cancelRun(runId) {
      // Describe, not query: it needs no worker, so a run still waiting for its first task can be cancelled.
      const handle = client.workflow.getHandle(runId);
      const d = await orNull(handle.describe());
      if (d?.status.name !== 'RUNNING' || d.type !== 'runWorkflow') return false;
      // It may finish between the description and the signal: then there is nothing to cancel (409).
      // A queued run may wait out a start delay, which the cancel ends (wake-run.ts).
      return signalRun(client, runId, cancelRunSignal);
    },
    async decide(runId, decision, opts = {}) {
      const handle = client.workflow.getHandle(runId);
      // Bounded as in getRun: a queued run whose first workflow task has not run yet (a batch's runs
      // fill the task queue) holds the query with no deadline of its own; the fuzzer's approve waited
      // past 30 s. Past the bound the status its search attributes carry decides (no worker needed).
      const view = await boundedRunView(handle, () => orNull(handle.describe()));
      if (view?.status !== 'awaiting_approval') return false;
      const { gateId, note, by, at } = opts;
      // The gate may have been decided and another opened since the caller looked: the run ignores a
      // decision naming another gate, and this check answers it in most such cases.
      const open = view.gate as { gateId?: number; decision?: string } | undefined;
      if (gateId !== undefined && open && ((open.gateId ?? gateId) !== gateId || open.decision)) return false;
      return signalled(
        handle.signal(decisionSignal, {
          decision,
          ...(gateId !== undefined ? { gateId } : {}),
          ...(note ? { note } : {}),
          ...(by ? { by } : {}),
          ...(at ? { at } : {}),
        }),
      );
    },
    agentServed(agent) {
      return hasWorkflowPollers(client, config.temporal.namespace, runTaskQueue(taskQueue, agent));
    },

    async createBatch(spec) {
      // The door decides (the core's checkBatch, all or nothing); the adapter only carries its answer.
      const refusal = await scheduler().query(batchCheckQuery, {
        tenant: spec.tenant,
        items: batchTotal(spec),
        costPerItem: spec.estimatedTokensPerItem,
      });
      if (refusal) return { accepted: false, ...refusal };
      await client.workflow.start<typeof batchWorkflow>('batchWorkflow', {
        workflowId: spec.batchId,
        taskQueue,
        args: [pooled(spec)],
        memo: { tenant: spec.tenant, total: batchTotal(spec) },
        priority: { priorityKey: PRIORITY_KEY[spec.priority] },
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      });
      return { accepted: true };
    },
    async getBatch(batchId) {
      const d = await orNull(client.workflow.getHandle(batchId).describe());
      if (!d || d.type !== 'batchWorkflow') return null;
      const total = Number(d.memo?.total ?? 0);
      const c = await countBatch(client, batchId, total);
      const running = c.running + c.awaiting_approval;
      const view: BatchView = {
        batchId,
        tenant: String(d.memo?.tenant ?? ''),
        total,
        queued: Math.max(0, total - running - c.completed - c.failed - c.cancelled),
        running,
        completed: c.completed,
        failed: c.failed,
        cancelled: c.cancelled,
      };
      return view;
    },
    async resumeBatch(batchId) {
      const ids = await failedRunIds(client, batchId);
      const specs = await mapLimit(ids, 16, (id) => client.workflow.getHandle(id).query(runSpecQuery));
      // New executions first, then the scheduler: every notice goes to the workflow id's newest
      // execution, which then exists, so the failed one is never signalled. Each starts past the failed
      // one's attempts (its spec says from which), so a late release of the failed one ends nothing;
      // `redrive` makes the core forget that the run had finished. A refused one stays started and
      // offers itself again later.
      const outcomes = await fleet.offerRuns(specs, { redrive: true, onRefused: 'keep' });
      return outcomes.filter((o) => o.state === 'accepted').length;
    },

    upsertTenant: (tenant, settings) =>
      answered(
        held(() =>
          withRetry(() => scheduler().executeUpdate(upsertTenantsUpdate, { args: [[{ tenant, settings }]] })),
        ),
      ),
    tenantStatus: (tenant) => ask(tenantQuery, tenant),
    tenantStatuses: (tenants) =>
      readTenantStatuses(
        tenants,
        (names) => ask(tenantsQuery, names),
        (name) => ask(tenantQuery, name),
      ),
    ledgerEntries: (tenant, limit) => ask(ledgerQuery, tenant, limit),

    schedulerStatus: () => ask(statusQuery),
    patchScheduler: (patch) =>
      held(() => withRetry(() => scheduler().executeUpdate(patchSettingsUpdate, { args: [patch] }))),
    drain: (intake) =>
      answered(held(() => withRetry(() => scheduler().executeUpdate(drainUpdate, { args: [{ intake }] })))),
    resume: () =>
      answered(held(() => withRetry(() => scheduler().executeUpdate(resumeUpdate, { args: [] })))),

    effectsSummary: async () => effects.summary(),

    async ready() {
      try {
        const d = await scheduler().describe();
        return d.status.name === 'RUNNING';
      } catch {
        return false;
      }
    },
  };
  return fleet;
}

import path from 'node:path';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import {
  batchItemsLocation,
  callIntentsLocation,
  effectStoreLocation,
  apiStoreLocation,
  openBatchItems,
  openCallIntents,
  openReportLog,
  openUpdatePermits,
  openEffectStore,
  openStore,
} from '../stores/open';
import { CallCharges } from '../activities/call-charges';
import { openAiStoredCompletions } from '../activities/usage-source';
import { schedulerSettings } from '../stores/tenants/tenants';
import { openDataConverter } from './claim-check';
import { createActivities } from '../activities';
import { scheduledRunActivities } from '../activities/scheduled-runs';
import { PermitGate } from '../activities/scheduler-updates';
import type { RunSpec, StartOptions } from '../contract/fleet-port';
import { SchedulerMailbox } from '../activities/mailbox';
import { createModelClient } from '../activities/model-client';
import { createChatClient } from '../activities/chat-client';
import { PoolObservations } from '../activities/observations';
import type { Config } from '../config';
import { runWorker, shutdownOptions } from '../util/worker-shutdown';
import { recoverUsage } from './recover-usage';
import { discardRunWorkflow, startRunWorkflow } from './start-run';
import { runTaskQueue } from './run-queues';
import type { EffectFunction } from '../activities/agent-effects';
import { BUILT_IN_AGENT_NAMES } from './built-in-agents';
import { untracedWorkerSinks } from './tracing';
import type { Tracing } from './tracing';

export interface FleetWorker {
  /** One Temporal worker per task queue served (the base queue's first, when served). */
  workers: Worker[];
  /** The task queues served: the base queue (scheduler, batches) and each agent's queue. */
  taskQueues: string[];
  /** Resolves when every worker has stopped. */
  done: Promise<void>;
  /** Graceful: stop polling, let in-flight activities finish (up to the grace time), flush the mailbox. */
  close(): Promise<void>;
}

/** The worker's workflow code: a prebuilt bundle (tests) or the workflows folder (bundled at start). */
export type WorkflowSource = Pick<WorkerOptions, 'workflowBundle'> | Pick<WorkerOptions, 'workflowsPath'>;

export const workflowsPath = path.join(__dirname, '..', 'workflows');

/**
 * Tracing's workflow interceptor modules, bundled with the workflows when tracing is on (they add
 * about 1.7 MB of OpenTelemetry to the bundle) and passed through by any workflow started without a
 * trace. A prebuilt bundle (`WORKFLOW_BUNDLE_PATH`) traces workflows only if built with them.
 */
export const workflowInterceptorModules = [path.join(workflowsPath, 'tracing-interceptors')];

/** A prebuilt bundle when configured (`WORKFLOW_BUNDLE_PATH`), else the workflows folder, bundled at start. */
export const workflowSource = (bundlePath: string | undefined): WorkflowSource =>
  bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath };

/**
 * Starts the fleet's worker: one Temporal worker per task queue, all with the same workflow bundle
 * and the same activities (one mailbox, one call ledger). It serves the base queue (the scheduler
 * and batch workflows; `base: false` leaves it to others) and the queue of each of `agents`
 * (default: the built-ins), where those agents' runs and their activities live.
 */
export async function startFleetWorker(opts: {
  config: Config;
  connection: NativeConnection;
  client: Client;
  modelBaseUrl: string;
  log: Logger;
  workflows?: WorkflowSource;
  /** The base task queue (default: TASK_QUEUE); agent queues are named under it. */
  taskQueue?: string;
  /** The agents whose queues this worker serves (the bundle must hold them); default: the built-ins. */
  agents?: readonly string[];
  /** Serve the base queue (scheduler and batches); default true. */
  base?: boolean;
  /** The user's effect functions (`applyAgentEffect`). */
  effects?: Readonly<Record<string, EffectFunction>>;
  /** The process's tracing (`startTracing`): its activity interceptors, workflow span sink and model-call spans. */
  tracing?: Tracing;
}): Promise<FleetWorker> {
  const { config, client, log, tracing } = opts;
  const tracer = tracing ? { tracer: tracing.tracer } : {};
  const interceptorModules = tracing ? workflowInterceptorModules : [];
  const window = new PoolObservations(config.model.maxPauseMs);
  // Set once the workers exist: from a shutdown on, the mailbox reports by signal (see its `stopping`).
  const started: { workers?: Worker[] } = {};
  const stopping = () =>
    started.workers?.some((w) => !['INITIALIZED', 'RUNNING'].includes(w.getState())) ?? false;
  const mailbox = new SchedulerMailbox(
    client,
    config.schedulerWorkflowId,
    config.mailboxFlushMs,
    () => window.drain(Date.now()),
    log,
    stopping,
  );
  const storeCalls = config.charges.usageLookup === 'openai-stored';
  const model = createModelClient({
    baseUrl: opts.modelBaseUrl,
    apiKey: config.model.apiKey,
    model: config.model.name,
    maxPauseMs: config.model.maxPauseMs,
    keyRetry: config.model.keyRetry,
    log,
    onObservation: (s) => window.add(s),
    ...tracer,
    storeCalls,
  });
  // Agents' models: one without a base URL is served where the steps' model plane is (the simulator).
  const chat = createChatClient({
    endpoints: config.models.endpoints.map((e) => ({ ...e, baseUrl: e.baseUrl ?? opts.modelBaseUrl })),
    defaultModel: config.models.default,
    maxPauseMs: config.model.maxPauseMs,
    keyRetry: config.model.keyRetry,
    storeCalls,
    log,
    onObservation: (s) => window.add(s),
    ...tracer,
  });
  const effects = await openEffectStore(effectStoreLocation(config));
  const batchItems = await openBatchItems(batchItemsLocation(config)).catch(async (err: unknown) => {
    await effects.close();
    throw err;
  });
  const intents = await openCallIntents(callIntentsLocation(config)).catch(async (err: unknown) => {
    await effects.close();
    await batchItems.close();
    throw err;
  });
  const reports = await openReportLog(callIntentsLocation(config)).catch(async (err: unknown) => {
    await effects.close();
    await batchItems.close();
    await intents.close();
    throw err;
  });
  // Every worker-side scheduler update holds one of the fleet's permits (WORKER_UPDATE_PERMITS).
  const permits = await openUpdatePermits(callIntentsLocation(config)).catch(async (err: unknown) => {
    await effects.close();
    await batchItems.close();
    await intents.close();
    await reports.close();
    throw err;
  });
  const updatePermits = new PermitGate(permits, config.schedulerWorkflowId, config.updatePermits, log);
  if (config.reports.path === 'pull') mailbox.logTo = reports;
  else mailbox.permits = updatePermits;
  const converter = await openDataConverter(config).catch(async (err: unknown) => {
    await permits.close();
    await reports.close();
    await intents.close();
    await effects.close();
    await batchItems.close();
    throw err;
  });
  // The tenants' settings as the API stores them: a run whose tenant the scheduler no longer holds
  // (evicted while the run waited at a gate, or a scheduler reset) brings it back from here.
  const apiStore = await openStore(apiStoreLocation(config)).catch(async (err: unknown) => {
    await effects.close();
    await batchItems.close();
    await intents.close();
    await reports.close();
    await permits.close();
    await converter.close();
    throw err;
  });
  const usage = storeCalls
    ? openAiStoredCompletions({
        baseUrl: config.charges.usageUrl ?? opts.modelBaseUrl,
        apiKey: config.model.apiKey,
      })
    : undefined;
  const calls = new CallCharges(intents, mailbox, config.charges, log, Date.now, usage);
  mailbox.onCharged = (delivered) => calls.settled(delivered);
  const closeStores = async () => {
    await calls.close();
    await intents.close();
    await reports.close();
    await permits.close();
    await effects.close();
    await batchItems.close();
    await converter.close();
    await apiStore.close();
  };
  const taskQueue = opts.taskQueue ?? config.temporal.taskQueue;
  const taskQueues = [
    ...new Set([
      ...(opts.base === false ? [] : [taskQueue]),
      ...(opts.agents ?? BUILT_IN_AGENT_NAMES).map((a) => runTaskQueue(taskQueue, a)),
    ]),
  ];
  // Before the workers poll: this process is seen alive, and dead workers' calls are charged.
  const workers = await calls
    .start()
    .then(() => createWorkers())
    .catch(async (err: unknown) => {
      await closeStores();
      throw err;
    });
  started.workers = workers;
  const done = Promise.all(
    workers.map((w) => runWorker(w, (m) => log.warn({ taskQueue: w.options.taskQueue }, m))),
  )
    .then(() => undefined)
    .finally(async () => {
      await mailbox.close();
      await closeStores();
    });
  return {
    workers,
    taskQueues,
    done,
    async close() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };

  async function createWorkers(): Promise<Worker[]> {
    if (taskQueues.length === 0)
      throw new Error('This worker serves no task queue (no agents, no base queue).');
    // Bundled once for every queue's worker (each would bundle the folder again).
    const source = opts.workflows ?? workflowSource(config.workflowBundlePath);
    const workflows: WorkflowSource =
      'workflowsPath' in source && source.workflowsPath !== undefined && taskQueues.length > 1
        ? {
            workflowBundle: await bundleWorkflowCode({
              workflowsPath: source.workflowsPath,
              workflowInterceptorModules: interceptorModules,
              logger: quiet,
            }),
          }
        : source;
    const startRun = (spec: RunSpec, o?: StartOptions) =>
      startRunWorkflow(client, taskQueue, spec, config.runs, o);
    const discardRun = (runId: string) => discardRunWorkflow(client, config.temporal.namespace, runId);
    const fleetActivities = createActivities({
      client,
      startRun,
      discardRun,
      recoverUsage: (windows) => recoverUsage(client, taskQueue, windows),
      schedulerId: config.schedulerWorkflowId,
      mailbox,
      reports,
      reportPullWaitMs: config.reports.pullWaitMs,
      stopping,
      calls,
      model,
      chat,
      effects,
      effectSinkUrl: config.effectSinkUrl,
      batchItems,
      updatePermits,
      // A disabled tenant is restored held (maxInFlight 0), as the API syncs it.
      tenantSettings: async (tenant) => {
        const record = await apiStore.tenants.get(tenant);
        return record ? schedulerSettings(record) : undefined;
      },
      ...(opts.effects ? { agentEffects: opts.effects } : {}),
      log,
    });
    // Schedules' firings offer their runs as the door does, with the tenant as the API stores it.
    const activities = {
      ...fleetActivities,
      ...scheduledRunActivities({
        client,
        schedulerId: config.schedulerWorkflowId,
        startRun,
        discardRun,
        tenant: (tenant) => apiStore.tenants.get(tenant),
        updatePermits,
        log,
      }),
    };
    const created: Worker[] = [];
    try {
      for (const queue of taskQueues) created.push(await createWorker(queue, workflows, activities));
    } catch (err) {
      // A worker never run holds its native resources until run or shut down.
      await Promise.all(created.map((w) => w.runUntil(Promise.resolve()).catch(() => undefined)));
      throw err;
    }
    return created;
  }

  function createWorker(queue: string, workflows: WorkflowSource, activities: object): Promise<Worker> {
    return Worker.create({
      connection: opts.connection,
      namespace: config.temporal.namespace,
      taskQueue: queue,
      dataConverter: converter.dataConverter,
      ...workflows,
      // A prebuilt bundle holds its interceptor modules already; a folder is bundled with them here.
      interceptors: {
        ...tracing?.worker.interceptors,
        ...('workflowsPath' in workflows ? { workflowModules: interceptorModules } : {}),
      },
      sinks: tracing?.worker.sinks ?? untracedWorkerSinks,
      activities,
      identity: `fairway-worker@${config.buildId}/${process.pid}`,
      // A deploy must not cancel in-flight steps: let them finish before the worker exits.
      ...shutdownOptions(config.shutdownGraceSeconds, config.shutdownForceSeconds),
      maxConcurrentActivityTaskExecutions: 400,
      maxConcurrentLocalActivityExecutions: 400,
      maxConcurrentWorkflowTaskExecutions: 100,
      maxCachedWorkflows: 2000,
    });
  }
}

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

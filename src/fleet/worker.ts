import path from 'node:path';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import {
  batchItemsLocation,
  callIntentsLocation,
  effectStoreLocation,
  apiStoreLocation,
  openBatchItems,
  openCallIntents,
  openEffectStore,
  openStore,
} from '../stores/open';
import { CallCharges } from '../activities/call-charges';
import { openDataConverter } from './claim-check';
import { createActivities } from '../activities';
import { SchedulerMailbox } from '../activities/mailbox';
import { createModelClient } from '../activities/model-client';
import { createChatClient } from '../activities/chat-client';
import { ObservationWindow } from '../activities/observations';
import type { Config } from '../config';
import { runWorker, shutdownOptions } from '../util/worker-shutdown';
import { recoverUsage } from './recover-usage';
import { discardRunWorkflow, startRunWorkflow } from './start-run';

export interface FleetWorker {
  worker: Worker;
  /** Resolves when the worker has stopped. */
  done: Promise<void>;
  /** Graceful: stop polling, let in-flight activities finish (up to the grace time), flush the mailbox. */
  close(): Promise<void>;
}

/** The worker's workflow code: a prebuilt bundle (tests) or the workflows folder (bundled at start). */
export type WorkflowSource = Pick<WorkerOptions, 'workflowBundle'> | Pick<WorkerOptions, 'workflowsPath'>;

export const workflowsPath = path.join(__dirname, '..', 'workflows');

/** A prebuilt bundle when configured (`WORKFLOW_BUNDLE_PATH`), else the workflows folder, bundled at start. */
export const workflowSource = (bundlePath: string | undefined): WorkflowSource =>
  bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath };

export async function startFleetWorker(opts: {
  config: Config;
  connection: NativeConnection;
  client: Client;
  modelBaseUrl: string;
  log: Logger;
  workflows?: WorkflowSource;
  taskQueue?: string;
}): Promise<FleetWorker> {
  const { config, client, log } = opts;
  const window = new ObservationWindow(config.model.maxPauseMs);
  // Set once the worker exists: from its shutdown on, the mailbox reports by signal (see its `stopping`).
  const started: { worker?: Worker } = {};
  const mailbox = new SchedulerMailbox(
    client,
    config.schedulerWorkflowId,
    config.mailboxFlushMs,
    () => window.drain(Date.now()),
    log,
    () => started.worker !== undefined && !['INITIALIZED', 'RUNNING'].includes(started.worker.getState()),
  );
  const model = createModelClient({
    baseUrl: opts.modelBaseUrl,
    apiKey: config.model.apiKey,
    model: config.model.name,
    maxPauseMs: config.model.maxPauseMs,
    log,
    onObservation: (s) => window.add(s),
  });
  // Agents' models: one without a base URL is served where the steps' model plane is (the simulator).
  const chat = createChatClient({
    endpoints: config.models.endpoints.map((e) => ({ ...e, baseUrl: e.baseUrl ?? opts.modelBaseUrl })),
    defaultModel: config.models.default,
    maxPauseMs: config.model.maxPauseMs,
    onObservation: (s) => window.add(s),
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
  const converter = await openDataConverter(config).catch(async (err: unknown) => {
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
    await converter.close();
    throw err;
  });
  const calls = new CallCharges(intents, mailbox, config.charges, log);
  mailbox.onCharged = (keys) => calls.settled(keys);
  const closeStores = async () => {
    await calls.close();
    await intents.close();
    await effects.close();
    await batchItems.close();
    await converter.close();
    await apiStore.close();
  };
  const taskQueue = opts.taskQueue ?? config.temporal.taskQueue;
  // Before the worker polls: this process is seen alive, and dead workers' calls are charged.
  const worker = await calls
    .start()
    .then(() => createWorker())
    .catch(async (err: unknown) => {
      await closeStores();
      throw err;
    });
  started.worker = worker;
  const done = runWorker(worker, (m) => log.warn({ taskQueue }, m)).finally(async () => {
    await mailbox.close();
    await closeStores();
  });
  return {
    worker,
    done,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };

  function createWorker(): Promise<Worker> {
    return Worker.create({
      connection: opts.connection,
      namespace: config.temporal.namespace,
      taskQueue,
      dataConverter: converter.dataConverter,
      ...(opts.workflows ?? workflowSource(config.workflowBundlePath)),
      activities: createActivities({
        client,
        startRun: (spec, o) => startRunWorkflow(client, taskQueue, spec, config.runs, o),
        discardRun: (runId) => discardRunWorkflow(client, config.temporal.namespace, runId),
        recoverUsage: (windows) => recoverUsage(client, taskQueue, windows),
        schedulerId: config.schedulerWorkflowId,
        mailbox,
        calls,
        model,
        chat,
        effects,
        effectSinkUrl: config.effectSinkUrl,
        batchItems,
        tenantSettings: async (tenant) => (await apiStore.tenants.get(tenant))?.settings,
        log,
      }),
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

import type { Server } from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import {
  apiStoreLocation,
  batchItemsLocation,
  callIntentsLocation,
  effectStoreLocation,
  openBatchItems,
  openEffectStore,
  openSchedulerState,
  openStore,
  openUpdatePermits,
} from './stores/open';
import { OPERATOR_UPDATE_PERMITS, PermitGate } from './activities/scheduler-updates';
import { ORPHAN_COMMIT_MS, startOrphanedBatches } from './api/routes/batch-parts';
import { createApps } from './api/app';
import { loadAgentCatalog } from './api/agents/catalog';
import { EventDispatcher } from './api/intake/event-dispatch';
import { WebhookDeliverer } from './api/webhooks/deliverer';
import { WebhookScanner } from './api/webhooks/scanner';
import { createRunEventSource } from './fleet/run-event-source';
import { listenWithLimits } from './api/server';
import { syncTenantsToFleet } from './api/tenant-sync';
import type { Config } from './config';
import { ensureSearchAttributes } from './fleet/ensure-search-attributes';
import { ensureScheduler } from './fleet/scheduler-handle';
import { startSchedulerWatchdog } from './fleet/scheduler-watchdog';
import type { SchedulerInput } from './workflows/scheduler';
import { createTemporalFleet } from './fleet/temporal-fleet';
import { agentPool, checkAgentModels } from './fleet/model-pools';
import { withUnavailableAs503 } from './fleet/unavailable';
import { createTemporalSchedules } from './fleet/schedules/temporal-schedules';
import { startFleetWorker } from './fleet/worker';
import { BUILT_IN_AGENT_NAMES } from './fleet/built-in-agents';
import { startToolWorker } from './fleet/tool-worker';
import type { ToolWorker } from './fleet/tool-worker';
import type { FleetWorker, WorkflowSource } from './fleet/worker';
import { startDevServer } from './infra/dev-server';
import { createLog } from './infra/log';
import { adminTokenOf } from './infra/admin-token';
import { installRuntime, sdkLevel } from './infra/runtime';
import { httpAnswers, waitFor } from './infra/wait-for';
import type { DevServer } from './infra/dev-server';
import { closableRetry } from './fleet/closable-retry';
import { openFleetClient } from './fleet/claim-check';
import { prunePayloads } from './fleet/payload-retention';
import { startSimulator } from './standins/modelplane';
import { startTracing } from './fleet/tracing';
import type { RunningSimulator } from './standins/modelplane';

/** How often the API sweeps the payload store for payloads past their retention. */
const PAYLOAD_SWEEP_MS = 3600_000;

export interface StackParts {
  temporal: boolean;
  sim: boolean;
  worker: boolean;
  api: boolean;
}

export interface Stack {
  temporalAddress: string;
  uiUrl: string | undefined;
  apiUrl: string | undefined;
  simUrl: string | undefined;
  modelBaseUrl: string;
  adminToken: string | undefined;
  adminTokenGenerated: boolean;
  client: Client;
  sim: RunningSimulator | undefined;
  worker: FleetWorker | undefined;
  /** The worker serving this process's tools (WORKER_TOOLS), with their credentials only. */
  tools: ToolWorker | undefined;
  log: Logger;
  close(): Promise<void>;
}

/**
 * Brings up whichever parts are asked for, in dependency order: the embedded Temporal dev server
 * (unless TEMPORAL_ADDRESS is set), the model-plane simulator (unless MODEL_BASE_URL is set), the
 * scheduler workflow, the worker and the API. `close()` stops them in reverse order.
 */
export async function startStack(
  config: Config,
  parts: StackParts,
  opts: { log?: Logger; workflows?: WorkflowSource; scheduler?: Partial<SchedulerInput> } = {},
): Promise<Stack> {
  const log = opts.log ?? createLog(config.logLevel);
  installRuntime(sdkLevel(config.logLevel), log);
  const closers: (() => Promise<void>)[] = [];
  // Aborted first thing on close: waits for other parts stop.
  const stopping = new AbortController();
  const close = async () => {
    stopping.abort();
    for (const c of closers.reverse())
      await c().catch((err: unknown) => log.error({ err: String(err) }, 'shutdown step failed'));
  };
  try {
    // Off (undefined) without OTEL_EXPORTER_OTLP_ENDPOINT; stopped last, so every part's spans are sent.
    const tracing = startTracing(config.tracing);
    if (tracing) closers.push(() => tracing.shutdown());
    let address = config.temporal.address;
    let uiUrl = config.temporal.uiUrl;
    if (!address) {
      if (!parts.temporal)
        throw new Error('TEMPORAL_ADDRESS is not set and this process does not start Temporal.');
      const dev: DevServer = await startDevServer({
        cliPath: config.temporal.cliPath,
        port: config.temporal.port,
        uiPort: config.temporal.uiPort,
        dbFile: path.resolve(config.dataDir, 'temporal.db'),
        namespace: config.temporal.namespace,
        log: (m) => log.info(m),
        output: log,
      });
      closers.push(() => dev.stop());
      address = dev.address;
      uiUrl ??= `http://localhost:${config.temporal.uiPort}`;
    }

    let sim: RunningSimulator | undefined;
    let modelBaseUrl = config.model.baseUrl;
    if (!modelBaseUrl && (parts.sim || parts.worker)) {
      sim = await startSimulator({ ...config.sim, host: config.host });
      closers.push(() => sim!.close());
      modelBaseUrl = sim.url;
    }

    // Started on its own (TEMPORAL_ADDRESS set), a part waits for Temporal to answer rather than exit.
    const temporalAddress = address;
    const retry = closableRetry(100);
    const connection = await waitFor(
      `Temporal at ${temporalAddress}`,
      () =>
        Connection.connect({
          address: temporalAddress,
          connectTimeout: '5s',
          // The SDK backs off a full second on RESOURCE_EXHAUSTED, which is also what a signal meets while
          // the scheduler continues-as-new (BUSY_WORKFLOW, a moment): retry such calls sooner.
          interceptors: [retry.interceptor],
        }),
      log,
      { signal: stopping.signal },
    );
    closers.push(async () => {
      await retry.settle(); // a retry still on its timer must not meet a closed channel
      await connection.close();
    });
    // Every client and worker shares the claim-check store: large payloads stay out of history.
    const {
      client,
      payloads,
      close: closeConverter,
    } = await openFleetClient(connection, config, tracing?.clientInterceptors);
    closers.push(closeConverter);
    // The operator's drain and runtime settings, outside the chain: every chain this process starts
    // (here, or its watchdog after a loss) begins with them.
    const operator =
      parts.worker || parts.api ? await openSchedulerState(apiStoreLocation(config)) : undefined;
    if (operator) closers.push(() => operator.close());
    if (parts.worker || parts.api) {
      await waitFor(
        `Temporal namespace ${config.temporal.namespace}`,
        async () => {
          if (config.temporal.address) await ensureSearchAttributes(client, config.temporal.namespace);
          await ensureScheduler(client, config, opts.scheduler, operator);
        },
        log,
        { signal: stopping.signal },
      );
    }

    let worker: FleetWorker | undefined;
    let tools: ToolWorker | undefined;
    if (parts.worker) {
      if (config.model.baseUrl) {
        const modelUrl = config.model.baseUrl;
        await waitFor(`the model plane at ${modelUrl}`, () => httpAnswers(modelUrl), log, {
          signal: stopping.signal,
        });
      }
      const nativeConnection = await waitFor(
        `Temporal at ${temporalAddress} (worker connection)`,
        () => NativeConnection.connect({ address: temporalAddress }),
        log,
        { signal: stopping.signal },
      );
      closers.push(() => nativeConnection.close());
      // The built-ins only: the user's agents (AGENTS, which the API reads) are served by the user's
      // own worker (startWorker, `fairway worker`), which holds their effect functions and tools.
      worker = await startFleetWorker({
        config,
        connection: nativeConnection,
        client,
        modelBaseUrl: modelBaseUrl ?? '',
        log,
        ...(opts.workflows ? { workflows: opts.workflows } : {}),
        agents: BUILT_IN_AGENT_NAMES,
        ...(tracing ? { tracing } : {}),
      });
      closers.push(() => worker!.close());
      tools = await startToolWorker({ config, connection: nativeConnection, log });
      closers.push(() => tools!.close());
      // The worker keeps the scheduler alive too, so a fleet without an API process still recovers.
      const watchdog = startSchedulerWatchdog({
        client,
        config,
        log,
        ...(opts.scheduler ? { extra: opts.scheduler } : {}),
        ...(operator ? { operator } : {}),
      });
      closers.push(async () => watchdog.stop());
    }

    let apiUrl: string | undefined;
    // Generated once and kept in DATA_DIR, so a restart on the same data keeps the same token.
    const kept = parts.api ? adminTokenOf(config.adminToken, config.dataDir) : undefined;
    const adminTokenGenerated = kept?.generated ?? false;
    const adminToken = kept?.token ?? config.adminToken;
    if (parts.api && adminToken) {
      // The user's agents modules first: one that fails to load stops the start with its own message.
      const agents = await loadAgentCatalog(config.agentModules);
      const db = await openStore(apiStoreLocation(config));
      closers.push(() => db.close());
      const effects = await openEffectStore(effectStoreLocation(config));
      closers.push(() => effects.close());
      checkAgentModels(config.models, agents.list());
      const poolOf = (agent: string) => agentPool(config.models, agents.get(agent));
      const permits = await openUpdatePermits(callIntentsLocation(config));
      closers.push(() => permits.close());
      const operatorUpdates = new PermitGate(
        permits,
        `${config.schedulerWorkflowId}:operator`,
        { slots: OPERATOR_UPDATE_PERMITS, ttlMs: config.updatePermits.ttlMs },
        log,
      );
      const fleet = withUnavailableAs503(
        createTemporalFleet(client, config, effects, poolOf, operatorUpdates),
      );
      const batchItems = await openBatchItems(batchItemsLocation(config));
      closers.push(() => batchItems.close());
      // A batch whose commit request died before its workflow started is started from here.
      const orphans = setInterval(() => {
        startOrphanedBatches({ fleet, batchItems, log }).catch((err: unknown) =>
          log.warn({ err }, 'could not start committed batches yet'),
        );
      }, ORPHAN_COMMIT_MS);
      orphans.unref();
      closers.push(async () => clearInterval(orphans));
      // Claim-checked payloads unused for PAYLOAD_RETENTION_DAYS go (every API replica sweeps; deletes are idempotent).
      if (config.payloadRetentionMs > 0) {
        const retention = setInterval(() => {
          prunePayloads({
            store: payloads,
            client,
            schedulerWorkflowId: config.schedulerWorkflowId,
            retentionMs: config.payloadRetentionMs,
            log,
          }).catch((err: unknown) =>
            log.warn({ err }, 'payload retention sweep failed; the next one tries again'),
          );
        }, PAYLOAD_SWEEP_MS);
        retention.unref();
        closers.push(async () => clearInterval(retention));
      }
      // The scheduler's tenant table follows the API's (e.g. after the scheduler chain was reset). In the
      // background: with no worker up yet the scheduler cannot answer, and the API serves meanwhile
      // (a submission of a tenant the scheduler lacks re-sends it anyway).
      if ((await db.listTenants()).length > 0) {
        void waitFor(
          'the scheduler to take the stored tenants',
          () => syncTenantsToFleet(db, fleet, log),
          log,
          {
            signal: stopping.signal,
            maxDelayMs: 10_000,
          },
        ).catch(() => undefined);
      }
      // The API's watchdog restarts a lost scheduler and gives a new (or reset) chain its tenants back.
      const watchdog = startSchedulerWatchdog({
        client,
        config,
        log,
        ...(opts.scheduler ? { extra: opts.scheduler } : {}),
        ...(operator ? { operator } : {}),
        onNewChain: () => syncTenantsToFleet(db, fleet, log),
        nudgeQueuedRuns: true,
      });
      closers.push(async () => watchdog.stop());
      // Events recorded but not yet turned into runs (this or a dead process's) are dispatched from here.
      const events = new EventDispatcher({ fleet, store: db, log });
      events.start();
      closers.push(() => events.stop());
      // Webhooks out: run events read from visibility into the outbox, and their deliveries, from here
      // (never from a workflow: a slow receiver costs a run nothing).
      const scanner = new WebhookScanner({
        store: db.webhooks,
        source: createRunEventSource(client, config.temporal.namespace, config.temporal.taskQueue),
        fleet,
        log,
        pollMs: config.webhooks.pollMs,
        overlapMs: config.webhooks.overlapMs,
      });
      scanner.start();
      closers.push(() => scanner.stop());
      const deliverer = new WebhookDeliverer({ store: db.webhooks, settings: config.webhooks, log });
      deliverer.start();
      closers.push(() => deliverer.stop());
      const apps = createApps({
        fleet,
        db,
        batchItems,
        ...(operator ? { schedulerState: operator } : {}),
        adminToken,
        adminTokenNext: config.adminTokenNext,
        tenantDefaults: config.tenantDefaults,
        runCaps: config.runCaps,
        eventCaps: config.eventCaps,
        webhookTargets: config.webhooks.targets,
        pendingClaimTtlMs: config.pendingClaimTtlMs,
        scheduleMinIntervalSeconds: config.scheduleMinIntervalSeconds,
        log,
        events,
        agents,
        ...(tracing ? { tracer: tracing.tracer } : {}),
        ...(uiUrl ? { temporalUi: { url: uiUrl, namespace: config.temporal.namespace } } : {}),
        schedules: withUnavailableAs503(
          createTemporalSchedules(client, {
            scope: config.schedulerWorkflowId,
            taskQueue: config.temporal.taskQueue,
            poolOf,
          }),
        ),
      });
      const server = await listenWithLimits(apps.api, config.port, config.host, config.http);
      apps.api.consoleSampler.start();
      closers.push(() => apps.api.consoleSampler.stop());
      const closeServer = (s: Server) => () =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      closers.push(closeServer(server));
      if (config.metrics.port !== undefined) {
        const metricsServer = await listenWithLimits(
          apps.metrics,
          config.metrics.port,
          config.metrics.host,
          config.http,
        );
        closers.push(closeServer(metricsServer));
      }
      const addr = server.address();
      apiUrl = `http://localhost:${typeof addr === 'object' && addr ? addr.port : config.port}`;
    }

    return {
      temporalAddress: address,
      uiUrl,
      apiUrl,
      simUrl: sim?.url,
      modelBaseUrl: modelBaseUrl ?? '',
      adminToken,
      adminTokenGenerated,
      client,
      sim,
      worker,
      tools,
      log,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import path from 'node:path';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import type { Logger } from 'pino';
import { effectStoreLocation, openEffectStore } from './activities/open-effect-store';
import { openStore } from './api/stores/store';
import { createApp } from './api/app';
import { syncTenantsToFleet } from './api/tenant-sync';
import type { Config } from './config';
import { ensureSearchAttributes } from './fleet/ensure-search-attributes';
import { ensureScheduler } from './fleet/scheduler-handle';
import type { SchedulerInput } from './workflows/scheduler';
import { createTemporalFleet } from './fleet/temporal-fleet';
import { withUnavailableAs503 } from './fleet/unavailable';
import { startFleetWorker } from './fleet/worker';
import type { FleetWorker, WorkflowSource } from './fleet/worker';
import { startDevServer } from './infra/dev-server';
import { installRuntime } from './infra/runtime';
import type { DevServer } from './infra/dev-server';
import { startSimulator } from './modelplane';
import type { RunningSimulator } from './modelplane';

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
  log: Logger;
  close(): Promise<void>;
}

const listen = (app: ReturnType<typeof createApp>, port: number, host: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
  });

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
  installRuntime(config.logLevel === 'debug' || config.logLevel === 'trace' ? 'DEBUG' : 'WARN');
  const log = opts.log ?? pino({ level: config.logLevel });
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.reverse())
      await c().catch((err: unknown) => log.error({ err: String(err) }, 'shutdown step failed'));
  };
  try {
    let address = config.temporal.address;
    let uiUrl: string | undefined;
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
      });
      closers.push(() => dev.stop());
      address = dev.address;
      uiUrl = `http://localhost:${config.temporal.uiPort}`;
    }

    let sim: RunningSimulator | undefined;
    let modelBaseUrl = config.model.baseUrl;
    if (!modelBaseUrl && (parts.sim || parts.worker)) {
      sim = await startSimulator({
        port: config.sim.port,
        host: config.host,
        tpm: config.sim.tpm,
        rpm: config.sim.rpm,
        seed: config.sim.seed,
        headerDialect: config.sim.headerDialect,
      });
      closers.push(() => sim!.close());
      modelBaseUrl = sim.url;
    }

    const connection = await Connection.connect({
      address,
      // The SDK backs off a full second on RESOURCE_EXHAUSTED, which is also what a signal meets while
      // the scheduler continues-as-new (BUSY_WORKFLOW, a moment): retry such calls sooner.
      interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ initialIntervalMs: () => 100 }))],
    });
    closers.push(() => connection.close());
    const client = new Client({ connection, namespace: config.temporal.namespace });
    if (parts.worker || parts.api) {
      if (config.temporal.address) await ensureSearchAttributes(client, config.temporal.namespace);
      await ensureScheduler(client, config, opts.scheduler);
    }

    let worker: FleetWorker | undefined;
    if (parts.worker) {
      const nativeConnection = await NativeConnection.connect({ address });
      closers.push(() => nativeConnection.close());
      worker = await startFleetWorker({
        config,
        connection: nativeConnection,
        client,
        modelBaseUrl: modelBaseUrl ?? '',
        log,
        ...(opts.workflows ? { workflows: opts.workflows } : {}),
      });
      closers.push(() => worker!.close());
    }

    let apiUrl: string | undefined;
    const adminTokenGenerated = !config.adminToken;
    const adminToken =
      config.adminToken ?? (parts.api ? `fw_admin_${randomBytes(24).toString('base64url')}` : undefined);
    if (parts.api && adminToken) {
      const db = openStore(path.resolve(config.dataDir, 'fairway.db'));
      closers.push(async () => db.close());
      const effects = await openEffectStore(effectStoreLocation(config));
      closers.push(() => effects.close());
      const fleet = withUnavailableAs503(createTemporalFleet(client, config, effects));
      // The scheduler's tenant table follows the API's (e.g. after the scheduler chain was reset).
      await syncTenantsToFleet(db, fleet, log);
      const app = createApp({ fleet, db, adminToken, tenantDefaults: config.tenantDefaults, log });
      const server = await listen(app, config.port, config.host);
      app.consoleSampler.start();
      closers.push(() => app.consoleSampler.stop());
      closers.push(
        () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      );
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
      log,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

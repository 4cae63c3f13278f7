import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { loadConfig } from '../config';
import type { Config } from '../config';
import type { EffectFunction } from '../activities/agent-effects';
import type { ToolHandler } from '../activities/tool-activities';
import { bundleAgents } from '../fleet/agent-bundle';
import { BUILT_IN_AGENT_NAMES } from '../fleet/built-in-agents';
import { startTracing } from '../fleet/tracing';
import { openFleetClient } from '../fleet/claim-check';
import { startSchedulerWatchdog } from '../fleet/scheduler-watchdog';
import { startToolWorker as startFleetToolWorker } from '../fleet/tool-worker';
import type { ToolWorker } from '../fleet/tool-worker';
import { startFleetWorker } from '../fleet/worker';
import { createLog } from '../infra/log';
import { installRuntime, sdkLevel } from '../infra/runtime';
import { apiStoreLocation, openSchedulerState } from '../stores/open';
import { toolTaskQueue } from '../contract/tool-registry';

/** A tool the worker serves: its function, and its own credential (default: a random one for this process). */
export type ToolOption =
  ToolHandler | { handler: ToolHandler; credential?: string; agents?: readonly string[] };

/** Where a worker finds the fleet: a parsed config, or environment variables over the process's own. */
export type ConfigOption = Config | Record<string, string | undefined>;

export interface StartWorkerOptions {
  /** Paths of the agents modules (each exports defineAgent() values), relative to `cwd`. */
  agents: readonly string[];
  /** Effect functions by name: what `ctx.effect(name, args)` runs, once per run and name. */
  effects?: Readonly<Record<string, EffectFunction>>;
  /** Tools by name, each served on its own task queue with only its own credential. */
  tools?: Readonly<Record<string, ToolOption>>;
  /** The fleet's configuration (TEMPORAL_ADDRESS, TASK_QUEUE, DATA_DIR or DATABASE_URL, MODEL_BASE_URL...). */
  config?: ConfigOption;
  /** Also serve the base queue (the scheduler and batch workflows) and keep the scheduler alive; default false. */
  scheduler?: boolean;
  /** Also serve the built-in agents' queues; default false. */
  builtIns?: boolean;
  /** Where relative agents paths start; default the working directory. */
  cwd?: string;
  log?: Logger;
}

export interface WorkerHandle {
  /** The agents served (the user's, then the built-ins when asked). */
  agents: string[];
  /** The Temporal task queues polled (agents, tools, and the base queue when asked). */
  taskQueues: string[];
  /** The tools served. */
  tools: string[];
  /** Resolves when the worker has stopped (after `close()`, or a fatal error). */
  done: Promise<void>;
  /** Graceful: stops polling, lets in-flight activities finish, closes the connections. */
  close(): Promise<void>;
}

/** The config a worker runs with: a parsed one as given, else the process's environment with `config` over it. */
export function configOf(config: ConfigOption | undefined): Config {
  if (config && 'temporal' in config && typeof config.temporal === 'object') return config as Config;
  // The environment is read here, once, as the config module would.
  return loadConfig({ ...process.env, ...(config as Record<string, string | undefined> | undefined) });
}

/** Connections to the fleet's Temporal: TEMPORAL_ADDRESS, else the local dev server's port. */
async function connect(config: Config) {
  const address = config.temporal.address ?? `localhost:${config.temporal.port}`;
  const native = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address }).catch(async (err: unknown) => {
    await native.close();
    throw err;
  });
  return { address, native, connection };
}

/**
 * Starts a worker for the user's agents: it loads and checks the agents modules, bundles them with
 * Fairway's workflows (a module that breaks the workflow sandbox fails here, named), and serves
 * each agent's task queue with Fairway's activities and the given effect functions, and each tool
 * on its own queue. The scheduler stays with the fleet's own workers unless `scheduler` is set.
 */
export async function startWorker(opts: StartWorkerOptions): Promise<WorkerHandle> {
  const config = configOf(opts.config);
  const log = opts.log ?? createLog(config.logLevel);
  installRuntime(sdkLevel(config.logLevel), log);
  if (opts.agents.length === 0 && !opts.builtIns && !opts.scheduler && !opts.tools)
    throw new TypeError('startWorker: give it agents modules (agents: ["./agents.ts"]).');
  const bundle =
    opts.agents.length > 0
      ? await bundleAgents(opts.agents, { cwd: opts.cwd, tracing: config.tracing.endpoint !== undefined })
      : undefined;
  const agents = [...(bundle?.agents ?? []), ...(opts.builtIns ? BUILT_IN_AGENT_NAMES : [])];
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse())
      await c().catch((err: unknown) => log.error({ err: String(err) }, 'worker shutdown step failed'));
  };
  try {
    // Off (undefined) without OTEL_EXPORTER_OTLP_ENDPOINT; stopped last, so every span is sent.
    const tracing = startTracing(config.tracing);
    if (tracing) closers.push(() => tracing.shutdown());
    const { native, connection } = await connect(config);
    closers.push(() => connection.close());
    closers.push(() => native.close());
    const { client, close: closeConverter } = await openFleetClient(
      connection,
      config,
      tracing?.clientInterceptors,
    );
    closers.push(closeConverter);
    const serveFleet = agents.length > 0 || opts.scheduler === true;
    const fleet = serveFleet
      ? await startFleetWorker({
          config,
          connection: native,
          client,
          modelBaseUrl: config.model.baseUrl ?? `http://localhost:${config.sim.port}`,
          log,
          ...(bundle ? { workflows: bundle.workflows } : {}),
          agents,
          base: opts.scheduler === true,
          ...(opts.effects ? { effects: opts.effects } : {}),
          ...(tracing ? { tracing } : {}),
        })
      : undefined;
    if (fleet) closers.push(() => fleet.close());
    if (opts.scheduler) {
      const operator = await openSchedulerState(apiStoreLocation(config));
      closers.push(() => operator.close());
      const watchdog = startSchedulerWatchdog({ client, config, log, operator });
      closers.push(async () => watchdog.stop());
    }
    const tools = await serveTools(config, native, log, opts.tools ?? {});
    closers.push(() => tools.close());
    const toolQueues = tools.serves.map((t) => toolTaskQueue(config.temporal.taskQueue, t));
    log.info({ agents, tools: tools.serves }, 'fairway worker started');
    return {
      agents,
      taskQueues: [...(fleet?.taskQueues ?? []), ...toolQueues],
      tools: [...tools.serves],
      done: fleet?.done ?? Promise.resolve(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function serveTools(
  config: Config,
  connection: NativeConnection,
  log: Logger,
  tools: Readonly<Record<string, ToolOption>>,
): Promise<ToolWorker> {
  const userTools = Object.entries(tools).map(([name, t]) => {
    const spec = typeof t === 'function' ? { handler: t } : t;
    return {
      name,
      handler: spec.handler,
      credential: spec.credential ?? randomCredential(name, log),
      ...(spec.agents ? { agents: spec.agents } : {}),
    };
  });
  return startFleetToolWorker({ config, connection, log, tools: [], userTools });
}

function randomCredential(tool: string, log: Logger): string {
  log.warn({ tool }, 'no credential given for this tool: using a random one for this process');
  return `dev-${tool}-${randomBytes(18).toString('base64url')}`;
}

export interface StartToolWorkerOptions {
  /** The tool's name, as agents declare it in `tools`. */
  name: string;
  /** The tool's own credential: held by this worker only, never written to any history. */
  credential: string;
  handler: ToolHandler;
  /** The only agents it answers; default: any agent that declared it. */
  agents?: readonly string[];
  config?: ConfigOption;
  log?: Logger;
}

/** Serves one tool on its own task queue (`<TASK_QUEUE>.tool.<name>`) with only its credential. */
export async function startToolWorker(
  opts: StartToolWorkerOptions,
): Promise<{ taskQueue: string; close(): Promise<void> }> {
  const config = configOf(opts.config);
  const log = opts.log ?? createLog(config.logLevel);
  installRuntime('WARN', log);
  const address = config.temporal.address ?? `localhost:${config.temporal.port}`;
  const connection = await NativeConnection.connect({ address });
  const tools = await startFleetToolWorker({
    config,
    connection,
    log,
    tools: [],
    userTools: [
      {
        name: opts.name,
        credential: opts.credential,
        handler: opts.handler,
        ...(opts.agents ? { agents: opts.agents } : {}),
      },
    ],
  }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  return {
    taskQueue: toolTaskQueue(config.temporal.taskQueue, opts.name),
    async close() {
      await tools.close();
      await connection.close();
    },
  };
}

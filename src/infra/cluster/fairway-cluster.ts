import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../../config';
import { freePort } from './child';
import type { Child } from './child';
import { spawnFairway } from './fairway-processes';
import type { FairwayRole } from './fairway-processes';
import { startTemporalCluster } from './temporal-cluster';
import type { TemporalCluster } from './temporal-cluster';

export interface FairwayCluster {
  temporal: TemporalCluster;
  /** The shared stores' PostgreSQL database. */
  databaseUrl: string;
  adminToken: string;
  apiUrls: string[];
  simUrl: string;
  sinkUrl: string;
  workers: Child[];
  apis: Child[];
  sim: Child;
  sink: Child;
  /** The environment every Fairway process of this cluster gets (plus its own PORT). */
  env: Record<string, string | undefined>;
  /** Starts one more Fairway process of this cluster (drills replace workers with it). */
  spawn(role: FairwayRole, name: string, extraEnv?: Record<string, string>): Promise<Child>;
  stop(): Promise<void>;
}

export interface FairwayClusterOptions {
  config: Config;
  /** DATA_DIR/cluster: PostgreSQL's data, the rendered configs, every process's log. */
  dir: string;
  adminToken: string;
  apiPorts: [number, number];
  uiBinary: string | undefined;
  /** The environment the Fairway processes inherit (default: this process's). */
  baseEnv?: Record<string, string | undefined>;
  log?: (m: string) => void;
}

/**
 * The whole production shape on one host: the Temporal cluster over PostgreSQL, the simulator,
 * the effect sink, two workers and two APIs sharing one scheduler workflow and one set of stores.
 */
export async function startFairwayCluster(opts: FairwayClusterOptions): Promise<FairwayCluster> {
  const { config } = opts;
  const log = opts.log ?? (() => {});
  const host = '127.0.0.1';
  const temporal = await startTemporalCluster({
    dir: opts.dir,
    namespace: config.temporal.namespace,
    host,
    uiBinary: opts.uiBinary,
    log,
  });
  const children: Child[] = [];
  const stop = async () => {
    // Front door first, then the workers (they finish in-flight steps), the model plane, Temporal.
    const order = (c: Child) => (c.name.startsWith('api') ? 0 : c.name.startsWith('worker') ? 1 : 2);
    for (const group of [0, 1, 2])
      await Promise.all(
        children
          .filter((c) => order(c) === group)
          .map((c) => c.stop({ timeoutMs: (config.shutdownGraceSeconds + 10) * 1000 })),
      );
    await temporal.stop();
  };
  try {
    await temporal.pg.ensureDatabase('fairway');
    const databaseUrl = temporal.pg.url('fairway');
    const logDir = path.join(opts.dir, 'logs');
    const simPort = config.port === 0 ? await freePort(host) : config.sim.port;
    const sinkPort = config.port === 0 ? await freePort(host) : config.sinkPort;
    const simUrl = `http://${host}:${simPort}`;
    const sinkUrl = `http://${host}:${sinkPort}`;
    const env: Record<string, string | undefined> = {
      ...(opts.baseEnv ?? process.env),
      HOST: host,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: config.temporal.namespace,
      MODEL_BASE_URL: simUrl,
      SIM_PORT: String(simPort),
      SINK_PORT: String(sinkPort),
      EFFECT_SINK_URL: sinkUrl,
      DATABASE_URL: databaseUrl,
      DATA_DIR: path.join(opts.dir, 'fairway'),
      ADMIN_TOKEN: opts.adminToken,
      // Each tool's identity, shared by the workers that serve it and the sink that checks it.
      ...toolCredentials(opts.baseEnv ?? process.env),
    };
    const spawn = async (role: FairwayRole, name: string, extraEnv: Record<string, string> = {}) => {
      const child = await spawnFairway({ role, name, env: { ...env, ...extraEnv }, logDir });
      children.push(child);
      void child.exited.then((code) => {
        if (children.includes(child)) children.splice(children.indexOf(child), 1);
        log(`${name} exited (${code})`);
      });
      return child;
    };
    const [sim, sink] = await Promise.all([spawn('sim', 'sim'), spawn('sink', 'sink')]);
    log('simulator and effect sink up');
    // One worker first: it starts the scheduler workflow; the rest join it.
    const workers = [await spawn('worker', 'worker-1')];
    workers.push(await spawn('worker', 'worker-2'));
    const apis = await Promise.all(
      opts.apiPorts.map((port, i) => spawn('api', `api-${i + 1}`, { PORT: String(port) })),
    );
    log('workers and APIs up');
    return {
      temporal,
      databaseUrl,
      adminToken: opts.adminToken,
      apiUrls: opts.apiPorts.map((p) => `http://${host}:${p}`),
      simUrl,
      sinkUrl,
      workers,
      apis,
      sim,
      sink,
      env,
      spawn,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The tool credentials of the environment, each made up (randomly, once per cluster) when unset. */
function toolCredentials(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['TOOL_LOOKUP_CREDENTIAL', 'TOOL_PAGER_CREDENTIAL', 'TOOL_SCANNER_CREDENTIAL'])
    out[name] = env[name] || randomBytes(24).toString('base64url');
  return out;
}

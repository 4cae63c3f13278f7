import { chmodSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/infra/cluster/child';
import type { Child } from '../../src/infra/cluster/child';
import { startFairwayCluster } from '../../src/infra/cluster/fairway-cluster';
import type { FairwayCluster } from '../../src/infra/cluster/fairway-cluster';
import { TEMPORAL_SERVER_VERSION, ensureServerTools } from '../../src/infra/cluster/server-tools';
import { loadConfig } from '../../src/config';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import { callApi, fetchBill, until } from './drill-stack';
import type { DrillStack } from './drill-stack';

const ADMIN = 'drill-admin-token-cluster-0123456789abcdef';

/** The Temporal a cluster drill ran on, for its result file's provenance. */
export const CLUSTER_TEMPORAL = `Temporal server ${TEMPORAL_SERVER_VERSION}, built from source: 4 service processes on PostgreSQL`;

export interface ClusterDrillStack extends DrillStack {
  cluster: FairwayCluster;
  /** The two worker processes now running (index 0 and 1). */
  workers: Child[];
  /** SIGKILL (or SIGTERM with `graceful`) worker `i` and start a replacement; returns ms to ready. */
  replaceWorker(
    i: number,
    buildId: string,
    opts?: { graceful?: boolean },
  ): Promise<{ ms: number; exit: number | string }>;
}

/**
 * The drills' stack on `npm run cluster`'s shape: PostgreSQL, four Temporal service processes, the
 * simulator, the effect sink, two workers and two APIs. `call` alternates between the two APIs, so
 * both take submissions throughout.
 */
export async function startClusterDrillStack(opts: {
  concurrency: number;
  env?: Record<string, string>;
  log?: (m: string) => void;
}): Promise<ClusterDrillStack> {
  const log = opts.log ?? (() => {});
  ensureServerTools(log);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fairway-cluster-drill-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as the postgres user when run as root
  const env: Record<string, string> = {
    FLEET_CONCURRENCY: String(opts.concurrency),
    DEFAULT_TENANT_MAX_IN_FLIGHT: String(opts.concurrency),
    TENANT_RATE_PER_SECOND: '100000',
    MAILBOX_FLUSH_MS: '50',
    // A SIGKILLed worker's uncharged calls are charged by another worker within seconds, not 40 s.
    CHARGE_OWNER_DEAD_SECONDS: '5',
    CHARGE_SWEEP_SECONDS: '1',
    // Their provisional worst-case charges are settled against the simulator's usage seconds later.
    CHARGE_USAGE_LOOKUP: 'openai-stored',
    CHARGE_RECONCILE_SECONDS: '1',
    CHARGE_RECONCILE_AFTER_SECONDS: '3',
    // A dead worker's unsent calls are refunded 30 s after they were made (a stalled one may send them).
    CHARGE_RECONCILE_TAKEN_AFTER_SECONDS: '30',
    SHUTDOWN_GRACE_SECONDS: '60',
    MODEL_TPM: '1000000000',
    MODEL_RPM: '100000000',
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  const config = loadConfig({ ...env, PORT: '0', DATA_DIR: dir, ADMIN_TOKEN: ADMIN });
  const cluster = await startFairwayCluster({
    config,
    dir,
    adminToken: ADMIN,
    apiPorts: [await freePort(), await freePort()],
    uiBinary: undefined,
    baseEnv: { ...process.env, ...env },
    log,
  });
  const workers = [...cluster.workers];
  let turn = 0;
  // Both APIs take requests, in turn.
  const call: DrillStack['call'] = (method, route, o = {}) =>
    callApi(cluster.apiUrls[turn++ % cluster.apiUrls.length]!, method, route, {
      ...o,
      token: o.token ?? ADMIN, // this cluster's own admin token
    });
  const stop = async () => {
    await cluster.stop();
    // Every process's log outlives the drill (a failure is read there), the data does not.
    const logs = path.join(dir, 'logs');
    if (existsSync(logs)) {
      const kept = `${dir}-logs`;
      cpSync(logs, kept, { recursive: true });
      log(`logs kept in ${kept}`);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    dir,
    temporalAddress: cluster.temporal.address,
    cluster,
    workers,
    call,
    async status() {
      const r = await call('GET', '/v1/admin/scheduler', { timeoutMs: 3000 });
      return r.status === 200 ? r.body : null;
    },
    async tenant(name, settings = {}) {
      // Set-up, once: a starved machine may take the new scheduler chain well past a call's usual 10 s.
      const r = await call('PUT', `/v1/admin/tenants/${name}`, { body: settings, timeoutMs: 180_000 });
      if (r.status !== 201) throw new Error(`tenant ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.apiKey as string;
    },
    get worker() {
      return undefined;
    },
    async startWorker() {
      throw new Error('the cluster drill replaces workers with replaceWorker()');
    },
    async replaceWorker(i, buildId, { graceful = false } = {}) {
      const old = workers[i]!;
      const exit = graceful ? await old.stop({ timeoutMs: 120_000 }) : await old.kill();
      const at = Date.now();
      workers[i] = await cluster.spawn('worker', `worker-${i + 1}-${buildId}`, { BUILD_ID: buildId });
      log(`worker ${i + 1} replaced by ${buildId} (pid ${workers[i]!.pid}; old exited ${exit})`);
      return { ms: Date.now() - at, exit };
    },
    async restartTemporal() {
      const t0 = Date.now();
      await cluster.temporal.restartService('history');
      return Date.now() - t0;
    },
    bill: () => fetchBill(cluster.simUrl),
    async sink() {
      return (await (await fetch(`${cluster.sinkUrl}/summary`)).json()) as SinkSummary;
    },
    stop,
  };
}

/**
 * The sink's count once it has caught up with the effects the store recorded (the last deliveries may
 * still be on their way when the counters say completed), and what it shows wrong: a key delivered
 * more than once, or a count of keys other than one per unit.
 */
export async function checkSink(
  s: ClusterDrillStack,
  effects: number,
  units: number,
): Promise<{ sink: SinkSummary; failures: string[] }> {
  const sink = await until(
    'sink count',
    () => s.sink(),
    (x) => x.distinctKeys >= effects,
    30_000,
    500,
  ).catch(() => s.sink());
  const failures: string[] = [];
  if (sink.duplicatedKeys !== 0)
    failures.push(`${sink.duplicatedKeys} keys delivered more than once at the sink`);
  if (sink.distinctKeys !== units) failures.push(`the sink saw ${sink.distinctKeys} keys for ${units} units`);
  return { sink, failures };
}

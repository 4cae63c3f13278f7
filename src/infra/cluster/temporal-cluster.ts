import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { FAIRWAY_SEARCH_ATTRIBUTES } from '../../contract/search-attributes';
import { freeLowPorts, spawnChild, waitForPort } from './child';
import type { Child } from './child';
import { startPostgres } from './postgres';
import type { Postgres } from './postgres';
import { serverBinary, sqlToolBinary } from './server-tools';
import { renderTemplateFile, templates } from './temporal-config';

/** The four server roles, each its own process, started in dependency order. */
export const SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface TemporalCluster {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  pg: Postgres;
  configFile: string;
  services: Map<ServiceName, Child>;
  ui: Child | undefined;
  /** SIGKILL (or SIGTERM) one service process and start it again from the same config. */
  restartService(name: ServiceName, opts?: { kill?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export interface TemporalClusterOptions {
  /** Everything the cluster keeps: PostgreSQL's data, the rendered config, the logs. */
  dir: string;
  namespace: string;
  host?: string;
  numHistoryShards?: number;
  /** The Web UI server binary, if built. */
  uiBinary?: string;
  log?: (m: string) => void;
}

function runSqlTool(pg: Postgres, db: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(
    sqlToolBinary,
    [
      '--plugin',
      'postgres12',
      '--ep',
      pg.host,
      '--port',
      String(pg.port),
      '--user',
      pg.user,
      '--password',
      pg.password,
      '--db',
      db,
      ...args,
    ],
    { encoding: 'utf8' },
  );
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/** Creates the two databases on a fresh cluster and brings both schemas to the server's version. */
export function setupSchemas(pg: Postgres, log: (m: string) => void): void {
  for (const [db, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    if (pg.fresh) {
      for (const step of [['create-database'], ['setup-schema', '-v', '0.0']]) {
        const r = runSqlTool(pg, db, step);
        if (!r.ok) throw new Error(`temporal-sql-tool ${step[0]} ${db} failed:\n${r.out}`);
      }
    }
    const r = runSqlTool(pg, db, ['update-schema', '--schema-name', schema]);
    if (!r.ok) throw new Error(`temporal-sql-tool update-schema ${db} failed:\n${r.out}`);
    log(`schema ${db} up to date`);
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries `fn` until it succeeds or `timeoutMs` passes (a fresh cluster answers in stages). */
async function retry<T>(what: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      await pause(500);
    }
  }
  throw new Error(`${what}: no success in ${timeoutMs} ms (last error: ${String(last)})`);
}

/** Registers the namespace and Fairway's search attributes; waits until both are visible. */
export async function prepareNamespace(
  address: string,
  namespace: string,
  log: (m: string) => void,
): Promise<void> {
  const connection = await retry('connect to the frontend', () =>
    Connection.connect({ address, connectTimeout: 5000 }),
  );
  try {
    const wf = connection.workflowService;
    const op = connection.operatorService;
    await retry(`namespace ${namespace}`, async () => {
      try {
        await wf.describeNamespace({ namespace });
      } catch {
        await wf
          .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') })
          .catch((err: unknown) => {
            if (!String(err).includes('already')) throw err;
          });
        await wf.describeNamespace({ namespace });
      }
    });
    await retry('search attributes', async () => {
      const existing = await op.listSearchAttributes({ namespace });
      const missing = FAIRWAY_SEARCH_ATTRIBUTES.filter((k) => !(k.name in (existing.customAttributes ?? {})));
      if (missing.length === 0) return;
      await op.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(
          missing.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
        ),
      });
      throw new Error(`added ${missing.map((k) => k.name).join(', ')}; checking again`);
    });
    log(
      `namespace ${namespace} ready with search attributes ${FAIRWAY_SEARCH_ATTRIBUTES.map((k) => k.name).join(', ')}`,
    );
  } finally {
    await connection.close();
  }
}

/**
 * A Temporal cluster as separate processes on this host: PostgreSQL (default and visibility stores),
 * the history, matching, frontend and worker services from one rendered config file, and the Web UI
 * when its binary is given. All on loopback, on free ports.
 */
export async function startTemporalCluster(opts: TemporalClusterOptions): Promise<TemporalCluster> {
  const log = opts.log ?? (() => {});
  const host = opts.host ?? '127.0.0.1';
  const logs = path.join(opts.dir, 'logs');
  mkdirSync(logs, { recursive: true });
  const closers: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const c of closers.splice(0).reverse())
      await c().catch((err: unknown) => log(`stop step failed: ${String(err)}`));
  };
  try {
    const pg = await startPostgres({
      dir: path.join(opts.dir, 'pg'),
      host,
      logFile: path.join(logs, 'postgres.log'),
      log,
    });
    closers.push(() => pg.stop());
    log(`PostgreSQL on ${host}:${pg.port}${pg.fresh ? ' (new cluster)' : ''}`);
    setupSchemas(pg, log);

    const [fg, fm, fh, hg, hm, mg, mm, wg, wm, ui] = await freeLowPorts(10, host);
    const configFile = renderTemplateFile(templates.server, path.join(opts.dir, 'temporal.yaml'), {
      LOG_LEVEL: 'warn',
      NUM_HISTORY_SHARDS: opts.numHistoryShards ?? 4,
      PG_HOST: pg.host,
      PG_PORT: pg.port,
      PG_USER: pg.user,
      PG_PASSWORD: pg.password,
      BIND_IP: host,
      FRONTEND_GRPC_PORT: fg!,
      FRONTEND_MEMBERSHIP_PORT: fm!,
      FRONTEND_HTTP_PORT: fh!,
      HISTORY_GRPC_PORT: hg!,
      HISTORY_MEMBERSHIP_PORT: hm!,
      MATCHING_GRPC_PORT: mg!,
      MATCHING_MEMBERSHIP_PORT: mm!,
      WORKER_GRPC_PORT: wg!,
      WORKER_MEMBERSHIP_PORT: wm!,
      DYNAMIC_CONFIG_FILE: templates.dynamicConfig,
    });
    const grpcPort: Record<ServiceName, number> = { frontend: fg!, history: hg!, matching: mg!, worker: wg! };

    const services = new Map<ServiceName, Child>();
    const startService = async (name: ServiceName) => {
      const child = await spawnChild({
        name: `temporal-${name}`,
        command: serverBinary,
        args: ['--config-file', configFile, '--allow-no-auth', 'start', '--service', name],
        logFile: path.join(logs, `temporal-${name}.log`),
      });
      services.set(name, child);
      await waitForPort(host, grpcPort[name], { child, timeoutMs: 180_000 });
      return child;
    };
    closers.push(async () => {
      // Clients first, stores last: worker, frontend, matching, history.
      for (const name of [...SERVICES].reverse()) await services.get(name)?.stop({ timeoutMs: 30_000 });
    });
    for (const name of SERVICES) {
      await startService(name);
      log(`temporal ${name} up (pid ${services.get(name)!.pid})`);
    }
    const address = `${host}:${fg}`;
    await prepareNamespace(address, opts.namespace, log);

    let uiChild: Child | undefined;
    let uiUrl: string | undefined;
    if (opts.uiBinary) {
      const uiDir = path.join(opts.dir, 'ui');
      mkdirSync(uiDir, { recursive: true });
      renderTemplateFile(templates.ui, path.join(uiDir, 'cluster.yaml'), {
        FRONTEND_ADDRESS: address,
        BIND_IP: host,
        UI_PORT: ui!,
        NAMESPACE: opts.namespace,
      });
      uiChild = await spawnChild({
        name: 'temporal-ui',
        command: opts.uiBinary,
        args: ['--root', opts.dir, '--config', 'ui', '--env', 'cluster', 'start'],
        logFile: path.join(logs, 'temporal-ui.log'),
      });
      closers.push(() => uiChild!.stop().then(() => {}));
      await waitForPort(host, ui!, { child: uiChild, timeoutMs: 60_000 });
      uiUrl = `http://${host}:${ui}`;
    }

    return {
      address,
      namespace: opts.namespace,
      uiUrl,
      pg,
      configFile,
      services,
      ui: uiChild,
      async restartService(name, { kill = true } = {}) {
        const c = services.get(name);
        if (c) await (kill ? c.kill() : c.stop({ timeoutMs: 30_000 }));
        await startService(name);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

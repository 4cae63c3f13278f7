import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { FAIRWAY_SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { resolveTemporalCli } from './temporal-cli';

/**
 * Server settings Fairway needs on every Temporal it starts (the same values are in
 * deploy/dynamicconfig/development-sql.yaml for compose and `npm run cluster`).
 * `history.MaxBufferedQueryCount` defaults to 1: a second query that meets the scheduler while a
 * workflow task is in flight is refused ("consistent query buffer is full"). The scheduler is busy
 * by design and is read by the API, the console, the watchdog and operators' CLIs at once.
 */
export const FAIRWAY_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'history.MaxBufferedQueryCount': 32,
};

export interface DevServerOptions {
  cliPath: string | undefined;
  /** undefined: a free port. */
  port: number | undefined;
  /** undefined: headless (no Web UI). */
  uiPort: number | undefined;
  /** undefined: in-memory. */
  dbFile: string | undefined;
  namespace: string;
  /** Extra `--dynamic-config-value K=JSON` pairs (tests shrink limits with these). */
  dynamicConfig?: Record<string, unknown>;
  log?: (m: string) => void;
}

export interface DevServer {
  address: string;
  env: TestWorkflowEnvironment;
  stop(): Promise<void>;
}

/**
 * Starts the Temporal CLI's dev server (SQLite-backed, Fairway's search attributes registered)
 * through the SDK, pointed at the binary the resolver found, or at the SDK's own download.
 */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const cli = resolveTemporalCli(opts.cliPath, opts.log);
  if (cli.kind === 'sdk-download') opts.log?.(`${cli.reason} Trying the SDK's download instead.`);
  if (opts.dbFile) mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  const dynamicConfig = { ...FAIRWAY_DYNAMIC_CONFIG, ...opts.dynamicConfig };
  const extraArgs = Object.entries(dynamicConfig).flatMap(([k, v]) => [
    '--dynamic-config-value',
    `${k}=${JSON.stringify(v)}`,
  ]);
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable:
        cli.kind === 'path' ? { type: 'existing-path', path: cli.path } : { type: 'cached-download' },
      ip: '127.0.0.1',
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ui: opts.uiPort !== undefined,
      ...(opts.uiPort !== undefined ? { uiPort: opts.uiPort } : {}),
      ...(opts.dbFile ? { dbFilename: opts.dbFile } : {}),
      namespace: opts.namespace,
      searchAttributes: FAIRWAY_SEARCH_ATTRIBUTES,
      log: { format: 'pretty', level: 'error' },
      extraArgs,
    },
  });
  return { address: env.address, env, stop: () => env.teardown() };
}

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { FAIRWAY_SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { resolveTemporalCli } from './temporal-cli';

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
  const extraArgs = Object.entries(opts.dynamicConfig ?? {}).flatMap(([k, v]) => [
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

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Logger } from 'pino';
import { FAIRWAY_SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { freePort } from './cluster/child';
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
  /**
   * When given, the server's own output (its JSON log lines and its banner) is written through this
   * logger, with `component: "temporal-server"`, instead of straight to the terminal. Needs the CLI
   * binary (not the SDK's download).
   */
  output?: Logger;
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
  if (opts.output && cli.kind === 'path') return spawnDevServer(cli.path, opts, extraArgs, opts.output);
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

/** Attempts at starting the dev server when one of its ports was taken between choosing and binding. */
const BIND_ATTEMPTS = 4;

/** Thrown when the server exited while starting because a port it chose was taken meanwhile. */
class PortTaken extends Error {}

const SERVER_LEVEL: Record<string, 'debug' | 'info' | 'warn' | 'error'> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Errors of an operation whose caller gave up on it (its deadline passed, or it closed a long poll)
 * and retries it: the dev server's SQLite store meets them whenever the machine is busy. The
 * operation is not lost (a workflow task whose completion failed is retried or times out and is
 * dispatched again), so they are relayed as warnings.
 */
const RETRIED_BY_CALLER = /context (canceled|deadline exceeded)$/;
/**
 * A task handed to a task queue partition that is unloading (the server stopping, or the partition
 * moving): Unavailable, and the history service's task queue hands it again, so not lost either. An
 * activity that completes as the server stops (the scheduler's report pull) meets it.
 */
const QUEUE_CLOSING = /^task queue closed$/;

/** Writes one line of the server's output through the logger: its JSON at its level, the rest at info. */
export function relay(log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>, line: string): void {
  if (!line.trim()) return;
  let entry: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed && typeof parsed === 'object') entry = parsed as Record<string, unknown>;
  } catch {
    entry = undefined;
  }
  if (!entry) return log.info(line.trim());
  const { level, msg, time: _time, ...rest } = entry;
  let at = SERVER_LEVEL[String(level).toUpperCase()] ?? 'info';
  // The cause comes last when the server wraps it ("…: failed to get signal info. Error: context canceled").
  if (
    at === 'error' &&
    typeof rest.error === 'string' &&
    (RETRIED_BY_CALLER.test(rest.error) || QUEUE_CLOSING.test(rest.error))
  )
    at = 'warn';
  log[at](rest, String(msg ?? ''));
}

/**
 * The CLI's dev server as a child process of ours, its output relayed through `log`. The server
 * chooses some of its internal ports itself, so another process can take one before it binds; that
 * start is retried with fresh ports.
 */
async function spawnDevServer(
  cliPath: string,
  opts: DevServerOptions,
  extraArgs: string[],
  output: Logger,
): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(cliPath, opts, extraArgs, output);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= BIND_ATTEMPTS) throw err;
      output.warn(
        { component: 'temporal-server', attempt },
        'a port was taken while the dev server started; starting it again',
      );
    }
  }
}

async function spawnOnce(
  cliPath: string,
  opts: DevServerOptions,
  extraArgs: string[],
  output: Logger,
): Promise<DevServer> {
  const log = output.child({ component: 'temporal-server' });
  const port = opts.port ?? (await freePort());
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--http-port',
    String(await freePort()),
    '--namespace',
    opts.namespace,
    ...(opts.uiPort !== undefined ? ['--ui-port', String(opts.uiPort)] : ['--headless']),
    ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
    ...FAIRWAY_SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]),
    ...extraArgs,
    '--log-format',
    'json',
    '--log-level',
    'warn',
  ];
  const child = spawn(cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let portTaken = false;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      if (line.includes('address already in use')) portTaken = true;
      relay(log, line);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const address = `127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => (gone = true));
  try {
    // Quietly until it answers: the server takes a few seconds to open its port.
    let env: TestWorkflowEnvironment | undefined;
    for (const deadline = Date.now() + 60_000; !env;) {
      if (gone) {
        if (portTaken)
          throw new PortTaken(
            `The Temporal dev server (${cliPath}) could not bind a port; see its log above.`,
          );
        throw new Error(`The Temporal dev server (${cliPath}) exited while starting; see its log above.`);
      }
      try {
        env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace: opts.namespace });
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    return {
      address,
      env,
      stop: async () => {
        await env.teardown();
        child.kill('SIGTERM');
        await exited;
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import type { Config } from '../../src/config';
import { startDevServer } from '../../src/infra/dev-server';
import { startStack } from '../../src/stack';
import type { Stack } from '../../src/stack';
import type { WorkflowSource } from '../../src/fleet/worker';
import type { SchedulerInput } from '../../src/workflows/scheduler';
import { startWorker } from '../../src/entry/start-worker';
import { agentOf, USER_AGENTS_MODULE } from './agent-variants';
import type { AgentsVariant } from './agent-variants';
import { recordParameters } from './results';

export { writeResult } from './results';

export const BENCH_ADMIN = 'bench-admin-token-0123456789abcdef';

export interface BenchStack extends Stack {
  config: Config;
  call(
    method: string,
    route: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  tenant(name: string, settings?: Record<string, unknown>): Promise<string>;
  /** The agent the scenario's runs use (`opts.agents`): `synthetic`, or the user-code agent. */
  agent: string;
  stop(): Promise<void>;
}

/**
 * A whole stack on its own embedded dev server (temp SQLite), for benchmarks and drills. With
 * `agents: 'user'` the API also reads the user-code agents module (AGENTS) and a worker started with
 * it (`startWorker`, as a user starts theirs) serves its agent beside the stack's own worker.
 */
export async function startBenchStack(
  env: Record<string, string> = {},
  opts: { scheduler?: Partial<SchedulerInput>; workflows?: WorkflowSource; agents?: AgentsVariant } = {},
): Promise<BenchStack> {
  const user = opts.agents === 'user';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fairway-bench-'));
  const dev = await startDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH,
    port: undefined,
    uiPort: undefined,
    dbFile: process.env.BENCH_DB_FILE ? path.join(dir, 'temporal.db') : undefined,
    namespace: 'default',
  });
  const config = loadConfig({
    TEMPORAL_ADDRESS: dev.address,
    DATA_DIR: dir,
    PORT: '0',
    SIM_PORT: '0',
    ADMIN_TOKEN: BENCH_ADMIN,
    TENANT_REQUEST_RATE_PER_SECOND: '100000',
    LOG_LEVEL: 'warn',
    ...(user ? { AGENTS: USER_AGENTS_MODULE } : {}),
    ...env,
  });
  const stack = await startStack(
    config,
    { temporal: false, sim: true, worker: true, api: true },
    {
      log: pino({ level: 'warn' }),
      ...(opts.scheduler ? { scheduler: opts.scheduler } : {}),
      ...(opts.workflows ? { workflows: opts.workflows } : {}),
    },
  );
  const userWorker = user
    ? await startWorker({
        agents: [USER_AGENTS_MODULE],
        config: { ...config, model: { ...config.model, baseUrl: stack.simUrl } },
        log: pino({ level: 'warn' }),
      }).catch(async (err: unknown) => {
        await stack.close();
        await dev.stop();
        throw err;
      })
    : undefined;
  const call: BenchStack['call'] = async (method, route, body, token = BENCH_ADMIN) => {
    const res = await fetch(`${stack.apiUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  return {
    ...stack,
    config,
    call,
    async tenant(name, settings = {}) {
      const r = await call('PUT', `/v1/admin/tenants/${name}`, settings);
      if (r.status !== 201) throw new Error(`tenant ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.apiKey as string;
    },
    agent: agentOf(opts.agents ?? 'built-in'),
    async stop() {
      await userWorker?.close();
      await stack.close();
      await dev.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Parses `--name value` flags with numeric defaults; `extra` is recorded with them (e.g. `--agents`). */
export function flags<T extends Record<string, number>>(
  argv: string[],
  defaults: T,
  extra: Record<string, unknown> = {},
): T {
  const out: Record<string, number> = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--') && argv[i + 1] !== undefined) out[a.slice(2)] = Number(argv[++i]);
  }
  recordParameters({ ...out, ...extra }); // the result file carries them
  return out as T;
}

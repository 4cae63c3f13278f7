import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config';
import { startDevServer } from '../src/infra/dev-server';
import { resolveSchemathesis, type SchemathesisCommand } from '../src/infra/schemathesis-cli';
import { unbannered } from '../src/infra/schemathesis-output';
import { startStack } from '../src/stack';

/**
 * `npm run fuzz [-- --examples N --seed S]`: schemathesis (pinned, from `.tools/`) against the API of
 * a whole real stack started here (a private Temporal dev server, the simulator, a worker, the API on
 * a free loopback port), reading the OpenAPI document the API serves. Two passes:
 *   - a tenant's key on every tenant route (runs, batches, events, triggers, webhook secrets, /tenants/me);
 *   - the admin token on /v1/admin/* and /metrics (after the tenant pass: it drains and re-patches the fleet).
 * Every check runs (the few state-dependent answers are listed, with reasons, in schemathesis.toml);
 * the process exits non-zero on any server error (5xx) or contract violation.
 */
const { values } = parseArgs({
  options: {
    examples: { type: 'string', default: '25' },
    seed: { type: 'string', default: '20261130' },
  },
});
const examples = String(Number.parseInt(values.examples, 10) || 25);
const seed = String(Number.parseInt(values.seed, 10) || 20261130);

interface Pass {
  name: string;
  token: string;
  filter: string[];
}

function runPass(st: SchemathesisCommand, schemaUrl: string, pass: Pass, reportDir: string): Promise<number> {
  const args = [
    ...st.prefix,
    '--config-file',
    path.join(__dirname, 'schemathesis.toml'),
    'run',
    schemaUrl,
    '--header',
    `Authorization: Bearer ${pass.token}`,
    '--checks',
    'all',
    '--phases',
    // Stateful testing needs OpenAPI links, which the document does not declare.
    'examples,coverage,fuzzing',
    '--max-examples',
    examples,
    '--seed',
    seed,
    // No example database: what a run sends depends on the seed alone, not on earlier runs.
    '--generation-database',
    'none',
    // One worker: with a fixed seed, the same requests in the same order every run.
    '--workers',
    '1',
    '--request-timeout',
    '30',
    // The API answers within SCHEDULER_ANSWER_SECONDS (30 s here, the default), with 503 past it: that
    // is the bound `max_response_time` holds it to, not schemathesis's 10-s default, which a loaded
    // machine's scheduler answer can pass while the API keeps its promise.
    '--max-response-time',
    String(SCHEDULER_ANSWER_SECONDS),
    '--report',
    'junit',
    '--report-dir',
    path.join(reportDir, pass.name),
    ...pass.filter,
  ];
  console.log(`\n== schemathesis, ${pass.name} pass (seed ${seed}, ≤${examples} examples per operation)`);
  // Asynchronously: the API under test answers from this very process.
  const child = spawn(st.command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...st.env },
  });
  // Line by line, so that no pytest-style banner reaches CI's log as it is (see schemathesis-output.ts).
  const copied = [child.stdout, child.stderr].map(
    (from, i) =>
      new Promise<void>((done) => {
        const to = i === 0 ? process.stdout : process.stderr;
        createInterface({ input: from, crlfDelay: Infinity })
          .on('line', (line) => to.write(`${unbannered(line)}\n`))
          .on('close', done);
      }),
  );
  return new Promise((resolve) => {
    child.on('error', () => resolve(1));
    child.on('close', (code) => void Promise.all(copied).then(() => resolve(code ?? 1)));
  });
}

async function main(): Promise<number> {
  const st = resolveSchemathesis((m) => console.log(m));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-fuzz-'));
  const temporal = await startDevServer({
    cliPath: undefined,
    port: undefined,
    uiPort: undefined,
    dbFile: undefined,
    namespace: 'default',
    log: (m) => console.log(`[temporal] ${m}`),
  });
  const adminToken = `fw_admin_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({
    TEMPORAL_ADDRESS: temporal.address,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    SIM_PORT: '0',
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'warn',
    // Generated runs may ask for steps of any legal length; a worker stops only when its in-flight
    // steps end (interactive steps are local activities, which shutdown waits for). A throwaway stack
    // caps a run's wall time low (longer ones are refused with 400, as any deployment's cap would), so
    // it stops in seconds.
    RUN_MAX_WALL_SECONDS: '10',
    SHUTDOWN_GRACE_SECONDS: '5',
    SHUTDOWN_FORCE_SECONDS: '10',
    // The endpoints the fuzzer registers (public addresses only, the default rule) get short, few attempts.
    WEBHOOK_TIMEOUT_MS: '1000',
    SCHEDULER_ANSWER_SECONDS: String(SCHEDULER_ANSWER_SECONDS),
    WEBHOOK_MAX_ATTEMPTS: '2',
  });
  const stack = await startStack(config, { temporal: false, sim: true, worker: true, api: true });
  try {
    const created = await fetch(`${stack.apiUrl}/v1/admin/tenants/fuzz`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { apiKey } = (await created.json()) as { apiKey?: string };
    if (created.status !== 201 || !apiKey)
      throw new Error(`could not create the fuzz tenant (${created.status})`);
    const schemaUrl = `${stack.apiUrl}/openapi.json`;
    const reportDir = path.join(dataDir, 'reports');
    const admin = ['--include-path-regex', '^/(v1/admin/|metrics$)'];
    const tenant = ['--exclude-path-regex', '^/(v1/admin/|metrics$)'];
    const codes = [
      await runPass(st, schemaUrl, { name: 'tenant', token: apiKey, filter: tenant }, reportDir),
      await runPass(st, schemaUrl, { name: 'admin', token: adminToken, filter: admin }, reportDir),
    ];
    const failed = codes.filter((c) => c !== 0).length;
    console.log(failed === 0 ? '\nfuzz: both passes clean' : `\nfuzz: ${failed} pass(es) failed`);
    return failed === 0 ? 0 : 1;
  } finally {
    // The verdict is already printed; tearing the stack down must not hold CI (the workers are
    // bounded by SHUTDOWN_FORCE_SECONDS, and this is a last bound over the whole teardown).
    const bound = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), TEARDOWN_BOUND_MS).unref());
    if ((await Promise.race([stack.close().then(() => 'done' as const), bound])) === 'timeout')
      console.error(`fuzz: the stack did not stop within ${TEARDOWN_BOUND_MS / 1000} s; exiting anyway`);
    await temporal.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const TEARDOWN_BOUND_MS = 60_000;
/** How long the API may wait for the scheduler's answer before it answers 503 (the default). */
const SCHEDULER_ANSWER_SECONDS = 30;

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

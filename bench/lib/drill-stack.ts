import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { stepWorstCase } from '../../src/contract/model-call';
import { startEffectSink } from '../../src/standins/effectsink/sink';
import type { RunningSink, SinkSummary } from '../../src/standins/effectsink/sink';
import { startDevServer } from '../../src/infra/dev-server';
import type { DevServer } from '../../src/infra/dev-server';
import { startSimulator } from '../../src/standins/modelplane';
import type { LatencyModel, RunningSimulator } from '../../src/standins/modelplane';
import type { CutCalls } from '../../src/standins/modelplane/state';
import { startStack } from '../../src/stack';
import type { Stack } from '../../src/stack';
import { spawnWorker } from './worker-child';
import type { WorkerChild } from './worker-child';
import { mapLimit } from '../../src/util/map-limit';
import { freePort } from '../../src/infra/cluster/child';

const ADMIN = 'drill-admin-token-0123456789abcdef';

/** Stacks not yet stopped: a drill interrupted by a signal stops them on its way out. */
const running = new Set<() => Promise<void>>();

/** Stops every drill stack this process started and has not stopped yet. */
export async function stopAllDrillStacks(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/** A drill's entry point: its stacks stop on Ctrl-C, SIGTERM or a crash, whichever comes first. */
export function runDrillMain(main: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void stopAllDrillStacks().finally(() => process.exit(130)));
  main().catch((err: unknown) => {
    console.error(err);
    void stopAllDrillStacks().finally(() => process.exit(1));
  });
}

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export interface DrillStack {
  dir: string;
  temporalAddress: string;
  /** HTTP against the API; a network error or timeout answers status 0. */
  call(
    method: string,
    route: string,
    opts?: { body?: unknown; token?: string; timeoutMs?: number },
  ): Promise<Reply>;
  /** `GET /v1/admin/scheduler`, or null while the scheduler cannot answer (no worker, no server). */
  status(): Promise<any | null>;
  tenant(name: string, settings?: Record<string, unknown>): Promise<string>;
  /** The worker child now running, if any. */
  worker: WorkerChild | undefined;
  /** Starts a worker; `env` adds to (or overrides) the stack's environment for this worker only. */
  startWorker(buildId: string, env?: Record<string, string>): Promise<WorkerChild>;
  /** The user's worker now running (`fairway worker --agents`), if any. */
  agentsWorker?: WorkerChild | undefined;
  /** What the effect sink counted, by itself (it does not trust the sender); the local stack needs `sink: true`. */
  sink(): Promise<SinkSummary>;
  /** Stops the Temporal dev server and starts it again on the same port and SQLite file; returns ms down. */
  restartTemporal(): Promise<number>;
  /** The simulator's bill (`GET /admin/bill`), counted where the tokens are spent. */
  bill(): Promise<Bill>;
  stop(): Promise<void>;
}

/**
 * Tokens served per tenant, of them those served for a call key (run, step) served before, and the
 * calls billed whose answer nobody read (a crash cut them).
 */
export interface Bill {
  tenants: Record<string, number>;
  billedAgain: Record<string, number>;
  cut: Record<string, CutCalls>;
}

/** One of the simulator's `/admin/*` figures (bill, calls): measured where the tokens are spent. */
export async function simAdmin<T>(simUrl: string, what: 'bill' | 'calls'): Promise<T> {
  const res = await fetch(`${simUrl}/admin/${what}`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`simulator ${what}: ${res.status}`);
  return (await res.json()) as T;
}

/** Fetches a simulator's per-tenant bill. */
export const fetchBill = (simUrl: string): Promise<Bill> => simAdmin<Bill>(simUrl, 'bill');

/** The one-machine drill stack, with what only it offers. */
export interface LocalDrillStack extends DrillStack {
  /** The model-plane simulator's base URL (its `/admin/*` figures are measured where the work happens). */
  simUrl: string;
  /** The scheduler's workflow id, as the stack's processes are configured. */
  schedulerWorkflowId: string;
  /**
   * Another API process (`src/entry/api.ts`) on the same Temporal, scheduler and data directory, as a
   * child that can be SIGKILLed; answers its base URL once it is ready.
   */
  startApi(name: string): Promise<{ url: string; child: WorkerChild }>;
  /**
   * The user's worker for the stack's agents modules (`agents`), started as a user starts it
   * (`fairway worker --agents <modules>`, a child that can be SIGKILLed); replaces `agentsWorker`.
   */
  startAgentsWorker(buildId: string): Promise<WorkerChild>;
}

/**
 * HTTP against one API process at `baseUrl` (the admin token unless `token`); a network error or
 * timeout (a process that died) answers status 0.
 */
export async function callApi(
  baseUrl: string,
  method: string,
  route: string,
  o: { body?: unknown; token?: string; timeoutMs?: number } = {},
): Promise<Reply> {
  try {
    const res = await fetch(`${baseUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${o.token ?? ADMIN}`,
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
      signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  } catch (err) {
    return { status: 0, body: { error: String(err) }, headers: new Headers() };
  }
}

/**
 * A deploy-shaped stack for drills: a Temporal dev server on a SQLite file in a temp dir (so it can
 * be restarted with its state), the simulator and the API in this process, and the worker as a
 * separate child process (`src/entry/worker.ts`, configured by env) that can be stopped, killed and
 * replaced. `stop()` takes down everything it started, whatever state the drill left it in.
 */
export async function startDrillStack(opts: {
  concurrency: number;
  env?: Record<string, string>;
  log?: (m: string) => void;
  onStatus?: (status: any) => void;
  /** Start an effect sink (in this process) and send every run's effect to it too. */
  sink?: boolean;
  /**
   * The user's agents modules (outside src/): the API takes runs of their agents (AGENTS), which
   * only a worker started with `startAgentsWorker` serves.
   */
  agents?: readonly string[];
  /** The simulator's latency (default: a few ms a call). */
  simLatency?: Partial<LatencyModel>;
  /**
   * Keep the dev server's state in memory (no SQLite file, no fsync per write: about twice the
   * throughput on 2 cores); `restartTemporal` then refuses, since a restart would lose every run.
   */
  inMemory?: boolean;
}): Promise<LocalDrillStack> {
  const log = opts.log ?? (() => {});
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fairway-drill-'));
  const dbFile = path.join(dir, 'temporal.db');
  const port = await freePort();
  const devOpts = {
    cliPath: process.env.TEMPORAL_CLI_PATH,
    port,
    uiPort: undefined,
    dbFile: opts.inMemory ? undefined : dbFile,
    namespace: 'default',
  };
  let dev: DevServer | undefined;
  let sim: RunningSimulator | undefined;
  let api: Stack | undefined;
  let worker: WorkerChild | undefined;
  let agentsWorker: WorkerChild | undefined;
  let workers = 0;
  let sink: RunningSink | undefined;
  const apis: WorkerChild[] = [];

  const stop = async () => {
    running.delete(stop);
    await worker?.kill().catch(() => undefined);
    await agentsWorker?.kill().catch(() => undefined);
    await Promise.all(apis.map((a) => a.kill().catch(() => undefined)));
    await api?.close().catch(() => undefined);
    await sink?.close().catch(() => undefined);
    await sim?.close().catch(() => undefined);
    await dev?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };

  running.add(stop);
  try {
    dev = await startDevServer(devOpts);
    sim = await startSimulator({
      port: 0,
      tpm: 1_000_000_000,
      rpm: 100_000_000,
      seed: 42,
      ...(opts.simLatency ? { latency: opts.simLatency } : {}),
    });
    if (opts.sink) sink = await startEffectSink({ port: 0, host: '127.0.0.1' });
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: dev.address,
      MODEL_BASE_URL: sim.url,
      DATA_DIR: dir,
      TASK_QUEUE: 'fairway-drill',
      SCHEDULER_WORKFLOW_ID: 'scheduler-drill',
      ADMIN_TOKEN: ADMIN,
      FLEET_CONCURRENCY: String(opts.concurrency),
      DEFAULT_TENANT_MAX_IN_FLIGHT: String(opts.concurrency),
      TENANT_RATE_PER_SECOND: '100000',
      TENANT_REQUEST_RATE_PER_SECOND: '100000',
      MAILBOX_FLUSH_MS: '50',
      // A SIGKILLed worker's uncharged calls are charged by the next worker within seconds, not 40 s.
      CHARGE_OWNER_DEAD_SECONDS: '5',
      CHARGE_SWEEP_SECONDS: '1',
      // Their provisional worst-case charges are settled against the simulator's usage seconds later.
      CHARGE_USAGE_LOOKUP: 'openai-stored',
      CHARGE_RECONCILE_SECONDS: '1',
      CHARGE_RECONCILE_AFTER_SECONDS: '3',
      // A dead worker's unsent calls are refunded 30 s after they were made (a stalled one may send them).
      CHARGE_RECONCILE_TAKEN_AFTER_SECONDS: '30',
      SHUTDOWN_GRACE_SECONDS: '60',
      ...(sink ? { EFFECT_SINK_URL: sink.url } : {}),
      ...(opts.agents ? { AGENTS: opts.agents.join(',') } : {}),
      ...opts.env,
    };
    const config = loadConfig({ ...env, PORT: '0', LOG_LEVEL: 'error' });
    api = await startStack(
      config,
      { temporal: false, sim: false, worker: false, api: true },
      { log: pino({ level: 'error' }) },
    );
    const apiUrl = api.apiUrl!;

    const call: DrillStack['call'] = (method, route, o) => callApi(apiUrl, method, route, o);

    const stack: LocalDrillStack = {
      dir,
      temporalAddress: dev.address,
      simUrl: sim.url,
      schedulerWorkflowId: config.schedulerWorkflowId,
      call,
      async status() {
        const r = await call('GET', '/v1/admin/scheduler', { timeoutMs: 3000 });
        if (r.status === 200) opts.onStatus?.(r.body);
        return r.status === 200 ? r.body : null;
      },
      async tenant(name, settings = {}) {
        // Set-up, once: a starved machine may take the new scheduler chain well past a call's usual 10 s.
        const r = await call('PUT', `/v1/admin/tenants/${name}`, { body: settings, timeoutMs: 180_000 });
        if (r.status !== 201) throw new Error(`tenant ${name}: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.apiKey as string;
      },
      get worker() {
        return worker;
      },
      async startWorker(buildId, extra = {}) {
        const n = ++workers;
        worker = await spawnWorker({
          env: { ...env, ...extra },
          buildId,
          logFile: path.join(dir, `worker-${n}-${buildId}.log`),
        });
        log(`worker ${buildId} started (pid ${worker.pid})`);
        return worker;
      },
      get agentsWorker() {
        return agentsWorker;
      },
      async startAgentsWorker(buildId) {
        if (!opts.agents) throw new Error('this drill stack has no agents modules (start it with agents)');
        const n = ++workers;
        agentsWorker = await spawnWorker({
          env,
          buildId,
          agents: opts.agents,
          logFile: path.join(dir, `worker-${n}-${buildId}.log`),
        });
        log(`fairway worker ${buildId} started (pid ${agentsWorker.pid})`);
        return agentsWorker;
      },
      bill: () => fetchBill(sim!.url),
      async startApi(name) {
        const port = await freePort();
        const child = await spawnWorker({
          env: { ...env, PORT: String(port) },
          buildId: name,
          entry: 'api',
          logFile: path.join(dir, `api-${name}.log`),
        });
        apis.push(child);
        log(`API ${name} started (pid ${child.pid}, port ${port})`);
        return { url: `http://127.0.0.1:${port}`, child };
      },
      async sink() {
        if (!sink) throw new Error('this drill stack has no effect sink (start it with sink: true)');
        return sink.ledger.summary();
      },
      async restartTemporal() {
        if (opts.inMemory) throw new Error('an in-memory drill stack cannot restart Temporal');
        const t0 = Date.now();
        const old = dev;
        dev = undefined;
        await old?.stop();
        dev = await startDevServer(devOpts);
        log(`temporal restarted on ${dev.address} (${Date.now() - t0} ms down)`);
        return Date.now() - t0;
      },
      stop,
    };
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until `done` holds; throws with `what` when `timeoutMs` passes. */
export async function until<T>(
  what: string,
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * Answers a client tries again (same idempotency key): unreachable, 409 (the key's first request still
 * in progress), 429, and 5xx; the drills count every answer and fail on any 5xx other than 503.
 */
const RETRIED = [0, 409, 429, 500, 502, 503, 504];

/** Counts the API's answers by status; `failures()` names the answers a drill must not see. */
export function answerTally(): {
  answers: Record<string, number>;
  onAnswer: (status: number) => void;
  failures: () => string[];
} {
  const answers: Record<string, number> = {};
  return {
    answers,
    onAnswer: (status) => void (answers[status] = (answers[status] ?? 0) + 1),
    failures: () =>
      Object.entries(answers)
        .filter(([status]) => Number(status) >= 500 && status !== '503')
        .map(([status, count]) => `the APIs answered ${status} to ${count} submissions`),
  };
}

/** `1000× 202, 3× 503`: the answers a drill's clients got. */
export const answersLine = (answers: Record<string, number>): string =>
  Object.entries(answers)
    .map(([status, count]) => `${count}× ${status}`)
    .join(', ');

export interface SubmitOptions {
  /** Requests in flight at once [16]. */
  parallel?: number;
  /** How many units may have been submitted by now [all]: a drill releases more as it goes on. */
  released?: () => number;
  /** Every answer the API gave (status 0: a network error or timeout), retries included. */
  onAnswer?: (status: number) => void;
  /** Unit `i`'s agent and input [synthetic, `input`]. */
  unit?: (i: number) => { agent: string; input: Record<string, unknown> };
}

/**
 * Submits `n` units (synthetic unless `opts.unit` says otherwise) one request each, with idempotency keys, so that a retry after a
 * timeout or a 503 can never create a second run; retries the answers in RETRIED after their
 * Retry-After (a client that meets a drain keeps trying) until `timeoutMs`. Returns the run ids.
 */
export async function submitUnits(
  s: DrillStack,
  token: string,
  n: number,
  input: Record<string, unknown>,
  keyPrefix: string,
  timeoutMs: number,
  opts: SubmitOptions = {},
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  const ids = new Array<string>(n);
  let next = 0;
  const lane = async () => {
    while (next < n) {
      if (opts.released && next >= opts.released()) {
        if (Date.now() > deadline) throw new Error(`submit: only ${next} of ${n} released in time`);
        await sleep(100);
        continue;
      }
      const i = next++;
      const unit = opts.unit?.(i) ?? { agent: 'synthetic', input };
      for (;;) {
        const r = await s.call('POST', '/v1/runs', {
          token,
          body: { ...unit, idempotencyKey: `${keyPrefix}-${i}` },
          timeoutMs: 60_000, // longer than the API's own wait for the scheduler
        });
        opts.onAnswer?.(r.status);
        if (r.status === 202 || r.status === 200) {
          ids[i] = r.body.runId as string;
          break;
        }
        if (Date.now() > deadline || !RETRIED.includes(r.status))
          throw new Error(`submit ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        await sleep(Math.min(2000, 1000 * Number(r.headers.get('retry-after') ?? 1)));
      }
    }
  };
  await Promise.all(Array.from({ length: opts.parallel ?? 16 }, lane));
  return ids;
}

/** The tenant's runs whose status is `completed`, from visibility. */
export async function completedRunIds(s: DrillStack, token: string): Promise<Set<string>> {
  const out = new Set<string>();
  let cursor: string | null = null;
  do {
    const q: string = `/v1/runs?status=completed&limit=500${cursor ? `&cursor=${cursor}` : ''}`;
    const r = await s.call('GET', q, { token });
    if (r.status !== 200) throw new Error(`list runs: ${r.status} ${JSON.stringify(r.body)}`);
    for (const item of r.body.items as { runId: string }[]) out.add(item.runId);
    cursor = r.body.nextCursor as string | null;
  } while (cursor);
  return out;
}

/** The tenant's ledger as the scheduler keeps it, and what the simulator billed that tenant. */
export interface LedgerCheck {
  tenant: string;
  spent: number;
  reserved: number;
  billed: number;
  /**
   * Of `billed`, the tokens of calls the simulator served again for a step it had served before: a
   * retried step calling again (whether or not the earlier call's charge reached the ledger).
   */
  billedAgain: number;
}

/**
 * The tenant's ledger (`GET /v1/tenants/me`) against the simulator's bill for it, once the ledger
 * has settled: nothing reserved and spent equal to the bill, or nothing reserved and neither figure
 * moving for `stableMs` (longer than a dead worker's calls take to be swept: the drill stacks set
 * `CHARGE_OWNER_DEAD_SECONDS` 5 and `CHARGE_SWEEP_SECONDS` 1), or, failing both, after `settleMs`.
 * The last settlements may reach the scheduler a moment after the counters say completed; a worker's
 * charges travel in the same report as its runs' releases, or before them, so once nothing is
 * reserved every charge of a living worker is in.
 */
export async function ledgerAgainstBill(
  s: DrillStack,
  token: string,
  settleMs = 30_000,
  stableMs = 8_000,
): Promise<LedgerCheck> {
  const read = async (): Promise<LedgerCheck | null> => {
    const me = await s.call('GET', '/v1/tenants/me', { token });
    if (me.status !== 200) return null;
    const tenant = me.body.tenant as string;
    const { spent, reserved } = me.body.ledger as { spent: number; reserved: number };
    const bill = await s.bill();
    return {
      tenant,
      spent,
      reserved,
      billed: bill.tenants[tenant] ?? 0,
      billedAgain: bill.billedAgain[tenant] ?? 0,
    };
  };
  let last: LedgerCheck | null = null;
  let since = { key: '', at: 0 };
  const stable = (v: LedgerCheck): boolean => {
    const key = `${v.spent}/${v.billed}`;
    if (v.reserved !== 0 || key !== since.key) since = { key: v.reserved === 0 ? key : '', at: Date.now() };
    return v.reserved === 0 && Date.now() - since.at >= stableMs;
  };
  await until(
    'a settled ledger',
    async () => (last = (await read()) ?? last),
    (v) => v !== null && v.reserved === 0 && (v.spent === v.billed || stable(v)),
    settleMs,
    500,
  ).catch(() => undefined);
  if (!last) throw new Error(`GET /v1/tenants/me did not answer in ${settleMs} ms`);
  return last;
}

/** Lost and duplicated, the two numbers every drill must keep at 0, and the ledger against the bill. */
export async function tally(
  s: DrillStack,
  token: string,
  accepted: string[],
): Promise<{
  lost: number;
  lostRunIds: string[];
  duplicated: number;
  effects: { effects: number; attempts: number; duplicates: number };
  counters: Record<string, number>;
  ledger: LedgerCheck;
}> {
  const ledger = await ledgerAgainstBill(s, token);
  const status = await s.status();
  const effects = (await s.call('GET', '/v1/admin/effects/summary')).body;
  const done = await completedRunIds(s, token);
  // The list is read from visibility, which may lag a loaded server by seconds: a run missing from
  // it is read itself (its workflow, strongly consistent) before it counts as lost.
  const missing = accepted.filter((id) => !done.has(id));
  const stillMissing = await mapLimit(missing.slice(0, 200), 8, async (id) => {
    const r = await s.call('GET', `/v1/runs/${encodeURIComponent(id)}`, { token });
    return r.status === 200 && r.body?.status === 'completed' ? null : id;
  });
  const lostRunIds = [...stillMissing.filter((id): id is string => id !== null), ...missing.slice(200)];
  const counters = status?.counters ?? {};
  // A unit admitted twice ran twice, unless its first lease expired (a loaded machine) and it was
  // admitted again, which the counters count in `expired`; an effect applied twice is a double side effect.
  const extraAdmissions = Math.max(0, (counters.admitted ?? 0) - (counters.expired ?? 0) - accepted.length);
  return {
    lost: lostRunIds.length,
    lostRunIds: lostRunIds.slice(0, 20),
    duplicated: effects.duplicates + extraAdmissions,
    effects,
    counters: { ...counters, inFlight: status?.inFlight, queued: status?.queued?.total },
    ledger,
  };
}

/** `ledger spent 30,120 = bill 30,120 (drill-chaos)`, the drills' one-line account of the ledger. */
export function ledgerLine(l: LedgerCheck): string {
  const again = l.billedAgain ? `, ${l.billedAgain} of it for steps served again` : '';
  const rel = l.spent === l.billed ? '=' : l.spent > l.billed ? '>' : '<';
  const over =
    l.spent > l.billed
      ? `; over by ${l.spent - l.billed}: calls cut by a crash, charged their worst case (not reconciled)`
      : '';
  return `ledger spent ${l.spent} ${rel} simulator bill ${l.billed} (tenant ${l.tenant}${again}${over})`;
}

/**
 * The ledger against the provider's bill (a failure, or none): never below it, and above it by no
 * more than `slack`, the worst cases of the calls a crash may have cut before the provider served
 * them (each is charged its worst case; 0 for a drill that kills nothing).
 */
export function ledgerMismatch(l: LedgerCheck, slack = 0): string[] {
  if (l.spent < l.billed)
    return [
      `tenant ${l.tenant}: ledger spent ${l.spent} < simulator bill ${l.billed} (${l.spent - l.billed})`,
    ];
  if (l.spent > l.billed + slack)
    return [
      `tenant ${l.tenant}: ledger spent ${l.spent} > simulator bill ${l.billed} + ${slack} for calls cut by crashes`,
    ];
  return [];
}

/**
 * The most a crash can overcharge: each of `crashes` cuts at most one call per run in flight
 * (`concurrency`), each charged at most its worst case (the largest of the `runIds`' steps).
 */
export function crashSlack(
  crashes: number,
  concurrency: number,
  runIds: string[],
  steps: number,
  tokens: number,
) {
  const worst = Math.max(0, ...runIds.map((id) => stepWorstCase(id, steps, tokens)));
  return crashes * concurrency * worst;
}

/** The failures every drill checks the same way: lost, duplicated, all completed, ledger = bill. */
export function tallyFailures(
  t: Awaited<ReturnType<typeof tally>>,
  units: number,
  ledgerSlack = 0,
): string[] {
  const failures: string[] = [];
  if (t.lost !== 0) failures.push(`${t.lost} units lost`);
  if (t.duplicated !== 0) failures.push(`${t.duplicated} duplicated`);
  if (t.counters.completed !== units) failures.push(`completed ${t.counters.completed} of ${units}`);
  if (t.counters.cancelled || t.counters.failed) failures.push('units cancelled or failed');
  const l = t.ledger;
  failures.push(...ledgerMismatch(l, ledgerSlack));
  if (l.reserved !== 0) failures.push(`tenant ${l.tenant}: ${l.reserved} tokens still reserved`);
  if (l.billed === 0) failures.push(`tenant ${l.tenant}: the simulator billed nothing`);
  return failures;
}

/** Waits until every unit has finished (one way or another), then tallies lost and duplicated. */
export async function finishAndTally(
  s: DrillStack,
  token: string,
  accepted: string[],
  units: number,
  timeoutMs: number,
): ReturnType<typeof tally> {
  await until(
    'every unit completed',
    () => s.status(),
    (st) => st !== null && st.counters.completed + st.counters.failed + st.counters.cancelled >= units,
    timeoutMs,
    500,
  );
  await sleep(200);
  return tally(s, token, accepted);
}

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { expect, inject } from 'vitest';
import { startRunWorkflow } from '../../src/fleet/start-run';
import type { StartOutcome } from '../../src/contract/offer-runs';
import { startFleetWorker, workflowSource } from '../../src/fleet/worker';
import { startEffectSink } from '../../src/standins/effectsink/sink';
import type { RunningSink } from '../../src/standins/effectsink/sink';
import { loadConfig } from '../../src/config';
import type { Config } from '../../src/config';
import { startStack } from '../../src/stack';
import type { Stack } from '../../src/stack';
import type { SchedulerInput } from '../../src/workflows/scheduler';

export const ADMIN = 'admin-test-token-0123456789abcdef';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestStack extends Stack {
  config: Config;
  id: string;
  /** Real HTTP against the stack's API. */
  call<T = any>(
    method: string,
    route: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply<T>>;
  /** Creates a tenant (admin) and returns its key. */
  tenant(name: string, settings?: Record<string, unknown>): Promise<string>;
  /**
   * The effect sink every run's effect is delivered to (EFFECT_SINK_URL): the outside world's own
   * count of what reached it, per idempotency key.
   */
  sink: RunningSink;
}

/**
 * A whole Fairway stack for one test file: the shared real Temporal dev server, a unique task queue
 * and scheduler workflow id, its own simulator, worker, API (on free ports) and SQLite files.
 */
export async function startTestStack(
  env: Record<string, string> = {},
  opts: { scheduler?: Partial<SchedulerInput>; parts?: { worker?: boolean } } = {},
): Promise<TestStack> {
  const id = randomUUID().slice(0, 8);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `fairway-${id}-`));
  // The tools act under credentials the sink knows (a tool worker without one makes up its own, which
  // the sink would refuse): a test may set its own.
  const tools = {
    lookup: env.TOOL_LOOKUP_CREDENTIAL ?? `test-lookup-${id}`,
    pager: env.TOOL_PAGER_CREDENTIAL ?? `test-pager-${id}`,
    scanner: env.TOOL_SCANNER_CREDENTIAL ?? `test-scanner-${id}`,
  };
  const sink = await startEffectSink({ port: 0, host: '127.0.0.1', tools });
  const config = loadConfig({
    EFFECT_SINK_URL: sink.url,
    TOOL_LOOKUP_CREDENTIAL: tools.lookup,
    TOOL_PAGER_CREDENTIAL: tools.pager,
    TOOL_SCANNER_CREDENTIAL: tools.scanner,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TASK_QUEUE: `fairway-${id}`,
    SCHEDULER_WORKFLOW_ID: `scheduler-${id}`,
    DATA_DIR: dataDir,
    PORT: '0',
    SIM_PORT: '0',
    ADMIN_TOKEN: ADMIN,
    // Tests poll many runs at once; the per-tenant request limit has its own unit tests.
    TENANT_REQUEST_RATE_PER_SECOND: '100000',
    LOG_LEVEL: 'warn',
    ...env,
  });
  const stack = await startStack(
    config,
    { temporal: false, sim: true, worker: opts.parts?.worker ?? true, api: true },
    {
      workflows: workflowSource(inject('workflowBundlePath')),
      ...(opts.scheduler ? { scheduler: opts.scheduler } : {}),
    },
  ).catch(async (err: unknown) => {
    await sink.close();
    throw err;
  });
  const call: TestStack['call'] = async (method, route, o = {}) => {
    const res = await fetch(`${stack.apiUrl}${route}`, {
      method,
      headers: {
        ...(o.token !== '' ? { authorization: `Bearer ${o.token ?? ADMIN}` } : {}),
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...o.headers,
      },
      ...(o.body !== undefined ? { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) } : {}),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, headers: res.headers, body: body as any };
  };
  return {
    ...stack,
    config,
    id,
    call,
    async tenant(name, settings = {}) {
      const r = await call('PUT', `/v1/admin/tenants/${name}`, { body: settings });
      if (r.status !== 201) throw new Error(`tenant ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.apiKey as string;
    },
    sink,
    async close() {
      await stack.close();
      await sink.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Every effect of the `effects` runs since `since` (what `effectsSeen` returned then) landed exactly
 * once, counted where it lands: the sink saw each key once, the simulator never had two calls of
 * one run in flight at once, and the effect store applied each once. Unless `reruns` (a crash, a
 * lost lease or a timed-out workflow task may legitimately run a step again: a model call the
 * simulator serves twice, an effect step the store then refuses), the simulator also served no
 * step twice and the effect step ran once per effect (`attempts`).
 */
export async function expectEffectsOnce(
  s: TestStack,
  effects: number,
  opts: { since?: EffectsSeen; reruns?: boolean } = {},
): Promise<void> {
  const since = opts.since ?? { deliveries: 0, distinctKeys: 0, effects: 0, attempts: 0 };
  const sink = s.sink.ledger.summary();
  expect(sink.duplicatedKeys, `keys delivered twice: ${sink.duplicatedSample.join(', ')}`).toBe(0);
  expect(sink.deliveries - since.deliveries, 'deliveries at the sink').toBe(effects);
  expect(sink.distinctKeys - since.distinctKeys, 'distinct keys at the sink').toBe(effects);
  const calls = s.sim!.state.calls.summary();
  if (!opts.reruns)
    expect(calls.stepsServedTwice, `steps served twice: ${calls.sample.stepsServedTwice.join(', ')}`).toBe(0);
  expect(
    calls.runsOverlapping,
    `runs with two calls at once: ${calls.sample.runsOverlapping.join(', ')}`,
  ).toBe(0);
  const store = (await s.call('GET', '/v1/admin/effects/summary')).body;
  expect(store.duplicates).toBe(0);
  expect(store.effects - since.effects, 'effects in the store').toBe(effects);
  if (!opts.reruns) expect(store.attempts - since.attempts, 'runs of the effect step').toBe(effects);
}

export interface EffectsSeen {
  deliveries: number;
  distinctKeys: number;
  effects: number;
  attempts: number;
}

/** The effect counts so far, for a later `expectEffectsOnce(s, n, { since })`. */
export async function effectsSeen(s: TestStack): Promise<EffectsSeen> {
  const { deliveries, distinctKeys } = s.sink.ledger.summary();
  const store = (await s.call('GET', '/v1/admin/effects/summary')).body;
  return { deliveries, distinctKeys, effects: store.effects, attempts: store.attempts };
}

/**
 * Polls `fn` until `done` holds and returns that value; throws if the deadline passes first, with
 * the caller and the last value seen. A wait met after more than a third of its deadline says so on
 * stderr, with its caller: a deadline under three times what the wait takes on a quiet machine is
 * one that a busy machine misses.
 */
export async function waitFor<T>(
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs = 60_000,
  everyMs = 200,
): Promise<T> {
  const { value, met } = await poll(fn, done, timeoutMs, everyMs);
  if (!met) {
    throw new Error(
      `waitFor: not met within ${timeoutMs.toLocaleString('en-US')} ms (${caller()}); last saw ${shown(value)}`,
    );
  }
  return value;
}

/**
 * Polls `fn` until `done` holds or the deadline passes, and returns the last value either way. Only
 * for a caller that asserts on that value itself (to fail with diagnostics of its own).
 */
export async function lastValueWithin<T>(
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs = 60_000,
  everyMs = 200,
): Promise<T> {
  return (await poll(fn, done, timeoutMs, everyMs)).value;
}

async function poll<T>(
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  everyMs: number,
): Promise<{ value: T; met: boolean }> {
  const t0 = Date.now();
  const deadline = t0 + timeoutMs;
  for (;;) {
    const value = await fn();
    const met = done(value);
    if (met || Date.now() > deadline) {
      const took = Date.now() - t0;
      if (met && took * 3 > timeoutMs) console.warn(slowWait(took, timeoutMs));
      return { value, met };
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A value for an error message: a reply as its status and body, anything else as JSON, cut short. */
function shown(v: unknown): string {
  const r = v as Partial<Reply> | null;
  const plain =
    r && typeof r === 'object' && 'status' in r && 'body' in r ? { status: r.status, body: r.body } : v;
  let text: string;
  try {
    text =
      JSON.stringify(plain, (_k, x: unknown) => (x instanceof Map ? Object.fromEntries(x) : x)) ?? String(v);
  } catch {
    text = String(v);
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}...` : text;
}

/** The first test file and line on the stack (`test/integration/x.test.ts:40`). */
function caller(): string {
  return (
    (new Error().stack ?? '')
      .split('\n')
      .map((l) => /(test\/(?:integration|e2e|cluster)\/[^:)]+:\d+)/.exec(l)?.[1])
      .find((x) => x !== undefined) ?? 'unknown caller'
  );
}

/** `waitFor: met after 7,100 of 20,000 ms (test/integration/x.test.ts:40)`. */
function slowWait(took: number, timeoutMs: number): string {
  return `waitFor: met after ${took.toLocaleString('en-US')} of ${timeoutMs.toLocaleString('en-US')} ms (${caller()})`;
}

/**
 * Starts another worker for the stack (a restart after `s.worker.close()`, or a worker for another
 * task queue); the caller closes it.
 */
export async function startExtraWorker(
  s: TestStack,
  taskQueue?: string,
): Promise<{ close(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await startFleetWorker({
    config: s.config,
    connection,
    client: s.client,
    modelBaseUrl: s.modelBaseUrl,
    log: s.log,
    workflows: workflowSource(inject('workflowBundlePath')),
    ...(taskQueue ? { taskQueue } : {}),
  });
  return {
    close: async () => {
      await worker.close();
      await connection.close();
    },
  };
}

/**
 * Starts a one-step synthetic run's workflow directly, as the API does before it submits, without
 * submitting it (a submitter that died, or a run on a queue no worker polls).
 */
export function startBareRun(
  s: TestStack,
  runId: string,
  tenant: string,
  taskQueue = s.config.temporal.taskQueue,
  extra: { pool?: string; input?: Record<string, number> } = {},
): Promise<StartOutcome> {
  const spec = {
    runId,
    tenant,
    agent: 'synthetic',
    priority: 'standard' as const,
    input: { steps: 1, tokensPerStep: 10, ...extra.input },
    estimatedTokens: 10,
    createdAt: new Date().toISOString(),
    ...(extra.pool ? { pool: extra.pool } : {}),
  };
  return startRunWorkflow(s.client, taskQueue, spec, s.config.runs);
}

/** The stack's simulator admin route `route`: GET without a body, POST with one; its JSON (a non-200 throws). */
export async function simAdmin<T = any>(
  s: Pick<TestStack, 'simUrl'>,
  route: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${s.simUrl!}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (res.status !== 200) throw new Error(`simulator ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

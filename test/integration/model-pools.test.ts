import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../src/standins/modelplane/server';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';
import { workerEnv } from '../support/worker-env';

const root = path.join(__dirname, '..', '..');
const MODULE = path.join(root, 'test', 'support', 'agents', 'pool-agents.ts');
/** The storm provider serves this many requests a minute: a burst of storm runs is throttled at once. */
const STORM_RPM = 2;
const STORM_RUNS = 3;
const CALM_RUNS = 8;
/** Calm runs are sent while the storm pool has at least this long of its pause to go. */
const PAUSE_LEFT_MS = 12_000;

interface PoolStatus {
  pausedUntil: string | null;
  inFlight?: number;
}

/**
 * Two model pools on the real dev server: `pool-storm` runs call a provider of their own (a second
 * simulator at 2 requests a minute, MODELS.storm.pool = "storm"), `pool-calm` runs the default model
 * on the stack's simulator. The storm provider throttles and its pool pauses; calm runs sent during
 * that pause reach their provider (measured at the simulator's first call of each run) before the
 * pause ends: a single governor would have held them for it. Every storm run still completes.
 */
describe('a storm on one model pool does not slow the other (real dev server)', () => {
  let s: TestStack;
  let storm: RunningSimulator;
  let worker: ChildProcess | undefined;
  let models: string;

  beforeAll(async () => {
    storm = await startSimulator({ tpm: 1_000_000, rpm: STORM_RPM, seed: 7, port: 0 });
    models = JSON.stringify({
      'sim-gpt': { dialect: 'openai' },
      storm: { dialect: 'openai', baseUrl: storm.url, pool: 'storm' },
    });
    s = await startTestStack({ AGENTS: MODULE, MODELS: models, FLEET_CONCURRENCY: '16' });
    worker = spawn(process.execPath, [path.join(root, 'bin', 'fairway.cjs'), 'worker', '--agents', MODULE], {
      env: workerEnv(s, { MODELS: models }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      worker!.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('fairway worker: serving')) resolve();
      });
      worker!.stderr!.on('data', (d: Buffer) => void (output += d.toString()));
      worker!.once('exit', (code) => reject(new Error(`fairway worker exited ${code}: ${output}`)));
    });
  }, 180_000);
  afterAll(async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await s?.close();
    await storm?.close();
  });

  const submit = async (key: string, agent: string, n: number): Promise<string[]> =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const r = await s.call('POST', '/v1/runs', { token: key, body: { agent, input: { n: i } } });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        return r.body.runId as string;
      }),
    );
  const fleetStatus = async () => {
    const r = await s.call('GET', '/v1/admin/scheduler').catch(() => undefined);
    return r?.status === 200
      ? (r.body as { governor: PoolStatus; pools?: Record<string, PoolStatus> })
      : undefined;
  };
  const final = (key: string, id: string) =>
    waitFor(
      () => s.call('GET', `/v1/runs/${id}`, { token: key }).catch(() => ({ status: 0, body: null })),
      (v) => ['completed', 'failed', 'cancelled'].includes(v.body?.status),
      240_000,
      500,
    ).then((r) => r.body as { status: string; error?: unknown });

  it('calm runs reach their provider while the storm pool is paused; every storm run completes', async () => {
    const stormKey = await s.tenant(`storm-${s.id}`);
    const calmKey = await s.tenant(`calm-${s.id}`);
    const stormIds = await submit(stormKey, 'pool-storm', STORM_RUNS);

    // The storm provider refuses past its rate: the storm pool pauses for its Retry-After.
    const paused = await waitFor(
      fleetStatus,
      (st) => {
        const until = st?.pools?.storm?.pausedUntil;
        return until !== null && until !== undefined && Date.parse(until) - Date.now() >= PAUSE_LEFT_MS;
      },
      120_000,
      100,
    );
    const pausedUntil = Date.parse(paused!.pools!.storm!.pausedUntil!);
    expect(pausedUntil - Date.now(), JSON.stringify(paused)).toBeGreaterThanOrEqual(PAUSE_LEFT_MS / 2);
    // The default pool saw no throttle.
    expect(paused!.governor.pausedUntil).toBeNull();

    const calmIds = await submit(calmKey, 'pool-calm', CALM_RUNS);
    const firstCalls = await waitFor(
      async () => calmIds.map((id) => s.sim!.state.firstCalls.get(id)),
      (ts) => ts.every((t) => t !== undefined),
      120_000,
      100,
    );
    for (const [i, t] of firstCalls.entries())
      expect(t, `calm run ${calmIds[i]} first called the provider after the storm pool's pause`).toBeLessThan(
        pausedUntil,
      );
    for (const id of calmIds) expect((await final(calmKey, id)).status).toBe('completed');
    // The calm runs went to their own provider only; the storm's calls to theirs.
    for (const id of calmIds) expect(storm.state.firstCalls.get(id)).toBeUndefined();

    for (const id of stormIds) {
      const run = await final(stormKey, id);
      expect(run.status, JSON.stringify(run.error)).toBe('completed');
      expect(storm.state.firstCalls.get(id)).toBeDefined();
    }
  }, 420_000);
});

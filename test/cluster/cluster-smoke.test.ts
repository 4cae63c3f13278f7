import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, portOpen } from '../../src/infra/cluster/child';
import { startFairwayCluster } from '../../src/infra/cluster/fairway-cluster';
import type { FairwayCluster } from '../../src/infra/cluster/fairway-cluster';
import { ensureServerTools, serverToolsPresent } from '../../src/infra/cluster/server-tools';
import { loadConfig } from '../../src/config';
import { temporalCli } from '../support/cli';
import { waitFor } from '../support/stack';

/**
 * `npm run cluster`'s shape, end to end: PostgreSQL, four Temporal service processes, the simulator,
 * the effect sink, two workers, two APIs. Runs when the server is built in .tools/ (or, with
 * FAIRWAY_CLUSTER_TEST=1, builds it first).
 */
const wanted = process.env.FAIRWAY_CLUSTER_TEST === '1';
/** With CI set a missing server is a failure, not a skip. */
const required = Boolean(process.env.CI);
const built = serverToolsPresent();
const runIt = wanted || required || built;
if (!runIt)
  console.warn(
    'cluster smoke test skipped: the Temporal server is not built in .tools/ (FAIRWAY_CLUSTER_TEST=1 builds it)',
  );

const ADMIN = 'fw_admin_cluster_smoke_test_token_0123456789';

describe.skipIf(!runIt)('Fairway on a Temporal cluster over PostgreSQL', () => {
  let c: FairwayCluster;
  let dir: string;
  const pids: number[] = [];
  const ports: number[] = [];

  const call = async (base: string, method: string, p: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
  };

  beforeAll(async () => {
    if (wanted) ensureServerTools((m) => console.log(m));
    else if (!built)
      throw new Error(
        'CI is set and the Temporal server is not built in .tools/ (npm run tools -- --cluster builds it)',
      );
    dir = mkdtempSync(path.join(tmpdir(), 'fairway-cluster-'));
    chmodSync(dir, 0o755); // PostgreSQL runs as the postgres user when the tests run as root
    const config = loadConfig({ PORT: '0', DATA_DIR: dir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' });
    c = await startFairwayCluster({
      config,
      dir,
      adminToken: ADMIN,
      apiPorts: [await freePort(), await freePort()],
      uiBinary: undefined,
      log: (m) => console.log(`[cluster] ${m}`),
    });
    pids.push(
      c.temporal.pg.child().pid,
      ...[...c.temporal.services.values()].map((s) => s.pid),
      ...[c.sim, c.sink, ...c.workers, ...c.apis].map((p) => p.pid),
    );
    ports.push(c.temporal.pg.port, Number(c.temporal.address.split(':')[1]));
    for (const u of [...c.apiUrls, c.simUrl, c.sinkUrl]) ports.push(Number(new URL(u).port));
  }, 600_000);

  afterAll(async () => {
    await c?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('answers /readyz with 200 on both APIs', async () => {
    for (const api of c.apiUrls) {
      const r = await waitFor(
        () => call(api, 'GET', '/readyz', ''),
        (x) => x.status === 200,
        120_000,
        500,
      );
      expect(r.status).toBe(200);
    }
  });

  it('lists the one scheduler workflow at the cluster frontend', async () => {
    const out = await waitFor(
      () =>
        temporalCli(c.temporal.address, [
          'workflow',
          'list',
          '--query',
          "WorkflowId = 'scheduler'",
          '-o',
          'json',
        ]),
      (o) => o.includes('"scheduler"'),
      60_000,
      1000,
    );
    const rows = out
      .trim()
      .split('\n')
      .filter((l) => l.trim().startsWith('{') || l.trim().startsWith('['));
    expect(out).toContain('schedulerWorkflow');
    expect(rows.length).toBeGreaterThan(0);
  });

  it('completes a run submitted to each API, and the sink sees each effect once', async () => {
    const t = await call(c.apiUrls[0]!, 'PUT', '/v1/admin/tenants/smoke', ADMIN, { weight: 1 });
    expect(t.status).toBe(201);
    const key = t.body.apiKey as string;
    const runIds: string[] = [];
    for (const [i, api] of c.apiUrls.entries()) {
      const r = await waitFor(
        () =>
          call(api, 'POST', '/v1/runs', key, {
            agent: 'synthetic',
            input: { steps: 2, tokensPerStep: 50, effect: true },
            idempotencyKey: `smoke-${i}`,
          }),
        (x) => x.status === 202,
        60_000,
        1000,
      );
      expect(r.status).toBe(202);
      runIds.push(r.body.runId as string);
    }
    for (const [i, runId] of runIds.entries()) {
      const run = await waitFor(
        () => call(c.apiUrls[(i + 1) % 2]!, 'GET', `/v1/runs/${runId}`, key),
        (x) => x.body?.status === 'completed',
        180_000,
        1000,
      );
      expect(run.body.status).toBe('completed');
    }
    const sink = (await (await fetch(`${c.sinkUrl}/summary`)).json()) as Record<string, number>;
    expect(sink.duplicatedKeys).toBe(0);
    expect(sink.distinctKeys).toBe(sink.deliveries);
    expect(sink.deliveries).toBe(2);
  });

  it('stops every process and frees every port', async () => {
    await c.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid}`).toThrow();
    for (const port of ports) expect(await portOpen('127.0.0.1', port), `port ${port}`).toBe(false);
  }, 300_000);
});

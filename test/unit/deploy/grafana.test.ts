import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, makeHarness, synthetic, type Harness } from '../api/harness';

const root = path.resolve(__dirname, '..', '..', '..');
const DASHBOARD = path.join(root, 'deploy', 'grafana', 'dashboards', 'fairway.json');

interface Panel {
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string }[];
}

/** Every `fairway_*` name an expression uses. */
const seriesOf = (expr: string) => [...expr.matchAll(/\bfairway_[a-z0-9_]+/g)].map((m) => m[0]);

describe('the Grafana dashboard', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('parses and names only series that /metrics serves', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[] };
    expect(dashboard.uid).toBe('fairway');
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(10);
    const used = new Set<string>();
    for (const p of panels) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      expect(p.datasource?.uid, p.title).toBe('fairway-prometheus');
      for (const t of p.targets!) for (const s of seriesOf(t.expr)) used.add(s);
    }

    // A fleet with a tenant, a queued run and a shed, so every labelled series has a sample too.
    const key = await h.tenant('acme', { maxQueued: 1, budget: { tokens: 100_000, period: 'day' } });
    await request(h.app).post('/v1/runs').set(bearer(key)).send(synthetic());
    await request(h.app).post('/v1/runs').set(bearer(key)).send(synthetic());
    const res = await request(h.app).get('/metrics').set(h.admin());
    expect(res.status).toBe(200);
    const served = new Set([...res.text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    const sampled = new Set([...res.text.matchAll(/^(fairway_[a-z0-9_]+)[{ ]/gm)].map((m) => m[1]!));
    expect(served.size).toBeGreaterThan(20);
    const unknown = [...used].filter((s) => !served.has(s));
    expect(unknown, 'series the dashboard names but /metrics does not serve').toEqual([]);
    const silent = [...used].filter((s) => !sampled.has(s));
    expect(silent, 'series the dashboard names that have no sample').toEqual([]);
    // The console's questions are on the dashboard too.
    for (const s of [
      'fairway_lane_admissions_total',
      'fairway_governor_tokens_per_minute',
      'fairway_provider_tokens_per_minute',
      'fairway_model_throttled_total',
      'fairway_sheds_total',
      'fairway_drain_mode',
      'fairway_ledger_spent_tokens',
    ]) {
      expect(used, s).toContain(s);
    }
  });

  it('is provisioned from files that agree with it', () => {
    const ds = readFileSync(
      path.join(root, 'deploy/grafana/provisioning/datasources/prometheus.yml'),
      'utf8',
    );
    expect(ds).toMatch(/uid: fairway-prometheus/);
    expect(ds).toMatch(/url: http:\/\/prometheus:9090/);
    const dash = readFileSync(path.join(root, 'deploy/grafana/provisioning/dashboards/fairway.yml'), 'utf8');
    expect(dash).toMatch(/path: \/var\/lib\/grafana\/dashboards/);
    const prom = readFileSync(path.join(root, 'deploy/prometheus/prometheus.yml'), 'utf8');
    expect(prom).toMatch(/targets: \['api:9464'\]/); // the API's metrics-only listener (METRICS_PORT)
    expect(prom).toMatch(/metrics_path: \/metrics/);
  });

  const compose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;
  const skipCompose = !compose && !process.env.CI;
  if (skipCompose) console.warn('grafana wiring check skipped: docker-compose is not on PATH');
  it.skipIf(skipCompose)('docker-compose wires prometheus and grafana to those files', () => {
    const r = spawnSync('docker-compose', ['-f', path.join(root, 'docker-compose.yml'), 'config'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        ADMIN_TOKEN: 'compose-test-token',
        TOOL_LOOKUP_CREDENTIAL: 'compose-test-lookup',
        TOOL_PAGER_CREDENTIAL: 'compose-test-pager',
        TOOL_SCANNER_CREDENTIAL: 'compose-test-scanner',
        GRAFANA_ADMIN_PASSWORD: 'compose-test-grafana',
      },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const grafana = /\n {2}grafana:\n([\s\S]*?)\n {2}\S/.exec(r.stdout)?.[1] ?? '';
    const prometheus = /\n {2}prometheus:\n([\s\S]*?)\n {2}\S/.exec(r.stdout)?.[1] ?? '';
    expect(grafana).toMatch(/deploy\/grafana\/provisioning:\/etc\/grafana\/provisioning/);
    expect(grafana).toMatch(/deploy\/grafana\/dashboards:\/var\/lib\/grafana\/dashboards/);
    expect(grafana).toMatch(/- 127\.0\.0\.1:3030:3000\/tcp/);
    expect(prometheus).toMatch(/deploy\/prometheus\/prometheus.yml:\/etc\/prometheus\/prometheus.yml/);
    expect(prometheus).toMatch(/- 127\.0\.0\.1:9090:9090\/tcp/);
  });
});

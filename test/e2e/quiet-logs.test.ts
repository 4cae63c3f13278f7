import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/infra/cluster/child';

const root = path.resolve(__dirname, '..', '..');
const ADMIN = 'admin-quiet-logs-0123456789abcdef';

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * `npm start` as a newcomer runs it (its output a pipe, not a terminal), then the README's "Try it"
 * and the tour's batch whose every 20th item fails at its `failAtStep`, and its resume. Everything the
 * process tree printed (Fairway, the Temporal SDK, the dev server) is one format, pino's JSON lines,
 * and nothing is at ERROR.
 */
describe('npm start prints one log format and no ERROR', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-quiet-'));
  const lines: string[] = [];
  let child: ReturnType<typeof spawn> | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('through a tenant, runs, a gate, a failing batch and its resume', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      SIM_PORT: String(await freePort()),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      ADMIN_TOKEN: ADMIN,
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.LOG_LEVEL;
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
    let upResolve: (url: string) => void = () => {};
    const up = new Promise<string>((resolve) => (upResolve = resolve));
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        if (line.includes('"Fairway is up"')) upResolve((JSON.parse(line) as { api: string }).api);
      });
    }
    const api = await Promise.race([
      up,
      exited.then((code) => {
        throw new Error(`npm start exited ${code}:\n${lines.join('\n')}`);
      }),
    ]);
    const call = async (method: string, route: string, token: string, body?: unknown) => {
      const res = await fetch(`${api}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    const tenant = await call('PUT', '/v1/admin/tenants/acme', ADMIN, { weight: 2, maxInFlight: 20 });
    expect(tenant.status).toBe(201);
    const key: string = tenant.body.apiKey;
    const run = await call('POST', '/v1/runs', key, {
      agent: 'synthetic',
      input: { steps: 3, tokensPerStep: 100 },
    });
    const triage = await call('POST', '/v1/runs', key, {
      agent: 'triage',
      input: { incident: 'disk full on db-3' },
    });
    const items = Array.from({ length: 100 }, (_, i) =>
      i % 20 === 0 ? { steps: 1, failAtStep: 1 } : { steps: 1 },
    );
    const batch = await call('POST', '/v1/batches', key, { agent: 'synthetic', priority: 'batch', items });
    expect(batch.status).toBe(202);
    const done = (b: any) => b.body.completed + b.body.failed === 100;
    const first = await until(() => call('GET', `/v1/batches/${batch.body.batchId}`, key), done, 120_000);
    expect(first.body).toMatchObject({ completed: 95, failed: 5 });
    const resumedAt = Date.now();
    expect((await call('POST', `/v1/batches/${batch.body.batchId}/resume`, key)).body.resumed).toBe(5);

    const gated = await until(
      () => call('GET', `/v1/runs/${triage.body.runId}`, key),
      (r) => r.body.status !== 'queued' && r.body.status !== 'running',
      60_000,
    );
    expect(gated.body.status).toBe('awaiting_approval');
    expect((await call('POST', `/v1/runs/${triage.body.runId}/approve`, key, { note: 'go' })).status).toBe(
      200,
    );
    const finished = await until(
      () => call('GET', `/v1/runs/${triage.body.runId}`, key),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body.status),
      60_000,
    );
    expect(finished.body.status).toBe('completed');
    expect((await call('GET', `/v1/runs/${run.body.runId}`, key)).body.status).toBe('completed');
    // The re-driven items fail again (each one's newest execution ends after the resume), and the
    // batch ends where it was.
    for (let i = 0; i < 100; i += 20) {
      const again = await until(
        () => call('GET', `/v1/runs/${batch.body.batchId}-${i}`, key),
        (r) => r.body.status === 'failed' && Date.parse(r.body.finishedAt) >= resumedAt,
        60_000,
      );
      expect(again.body, `item ${i}`).toMatchObject({ status: 'failed' });
      expect(Date.parse(again.body.finishedAt), `item ${i} ended after the resume`).toBeGreaterThanOrEqual(
        resumedAt,
      );
    }
    const second = await until(() => call('GET', `/v1/batches/${batch.body.batchId}`, key), done, 60_000);
    expect(second.body).toMatchObject({ completed: 95, failed: 5 });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    console.log(`npm start printed ${lines.length} lines:\n${lines.join('\n')}`);
    const notJson = lines.filter((l) => {
      try {
        const entry = JSON.parse(l) as { level?: unknown; msg?: unknown };
        return typeof entry.level !== 'number' || typeof entry.msg !== 'string';
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const errors = lines.filter(
      (l) => (JSON.parse(l) as { level: number }).level >= 50 || /level=ERROR/i.test(l),
    );
    expect(errors).toEqual([]);
    // The SDK's and the dev server's lines are among them, in the same format.
    expect(lines.some((l) => l.includes('"component":"temporal-server"'))).toBe(true);
  }, 300_000);
});

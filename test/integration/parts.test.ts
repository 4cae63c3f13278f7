import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, groupAlive, killPart, startPart, stopPart } from '../support/parts';
import type { Part } from '../support/parts';
import { lastValueWithin, waitFor } from '../support/stack';
import { identityOf } from '../../src/activities/tool-activities';
import { toolIdentitySalt } from '../../src/fleet/identity-salt';

const ADMIN = 'admin-parts-test-0123456789abcdef-0123';
type PartName = 'temporal' | 'sim' | 'sink' | 'worker' | 'tools' | 'api';
/** Tool credentials: the tool worker holds them, the sink authenticates the pager's with its own. */
const LOOKUP_CREDENTIAL = 'parts-lookup-credential-0123456789abcdef';
const PAGER_CREDENTIAL = 'parts-pager-credential-0123456789abcdef';

/** The other parts in random order, Temporal anywhere but first (so something must wait for it). */
function shuffledOrder(): string[] {
  const rest = ['sim', 'sink', 'worker', 'tools', 'api'].sort(() => Math.random() - 0.5);
  const at = 1 + Math.floor(Math.random() * rest.length);
  return [...rest.slice(0, at), 'temporal', ...rest.slice(at)];
}

describe('the parts run alone and wait for each other', () => {
  const parts: Part[] = [];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-parts-'));
  afterAll(async () => {
    for (const p of parts) if (!(await stopPart(p, 20_000))) killPart(p);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('started as six processes in shuffled order, they complete runs through the API (tools on a worker of their own), and all stop on SIGTERM', async () => {
    const [temporalPort, uiPort, simPort, sinkPort, apiPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const common = {
      DATA_DIR: dataDir,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'info',
      TASK_QUEUE: 'fairway-parts',
      SCHEDULER_WORKFLOW_ID: 'scheduler-parts',
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
    };
    const address = `127.0.0.1:${temporalPort}`;
    const sink = `http://127.0.0.1:${sinkPort}`;
    const env: Record<PartName, Record<string, string>> = {
      temporal: {
        ...common,
        TEMPORAL_PORT: String(temporalPort),
        TEMPORAL_UI_PORT: String(uiPort),
        PORT: String(apiPort),
      },
      sim: { ...common, SIM_PORT: String(simPort) },
      sink: {
        ...common,
        SINK_PORT: String(sinkPort),
        HOST: '127.0.0.1',
        TOOL_LOOKUP_CREDENTIAL: LOOKUP_CREDENTIAL,
        TOOL_PAGER_CREDENTIAL: PAGER_CREDENTIAL,
      },
      // The fleet worker serves no tool and holds no credential (as in docker-compose.yml) ...
      worker: {
        ...common,
        TEMPORAL_ADDRESS: address,
        MODEL_BASE_URL: `http://127.0.0.1:${simPort}`,
        EFFECT_SINK_URL: sink,
        WORKER_TOOLS: '',
      },
      // ... a tool worker serves the triage agent's tools, with their credentials (npm run start:tools).
      tools: {
        ...common,
        TEMPORAL_ADDRESS: address,
        EFFECT_SINK_URL: sink,
        WORKER_TOOLS: 'lookup,pager',
        TOOL_LOOKUP_CREDENTIAL: LOOKUP_CREDENTIAL,
        TOOL_PAGER_CREDENTIAL: PAGER_CREDENTIAL,
      },
      api: { ...common, TEMPORAL_ADDRESS: address, PORT: String(apiPort) },
    };
    const order = shuffledOrder();
    console.log(`start order: ${order.join(', ')}`);
    const part = (name: string) => parts.find((p) => p.name === name)!;
    const waiting = /waiting for Temporal at 127\.0\.0\.1:\d+ \(not answering yet/;
    for (const name of order) {
      if (name === 'temporal') {
        // Temporal comes up only once the parts started before it are seen waiting for it (not exiting).
        const early = parts.filter((p) => p.name !== 'sim' && p.name !== 'sink');
        // The per-part checks below say which part did not wait (with its output).
        const settled = await lastValueWithin(
          async () => early.every((p) => waiting.test(p.output()) || p.child.exitCode !== null),
          (ok) => ok,
          120_000,
          250,
        );
        for (const p of early) {
          expect(p.child.exitCode, `${p.name} exited:\n${p.output().slice(-3000)}`).toBeNull();
          expect(p.output()).toMatch(waiting);
        }
        expect(settled).toBe(true);
      }
      parts.push(startPart(name, env[name as PartName]));
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const banner: Record<string, string> = { sim: 'simulator started', tools: 'tool worker started' };
    const started = (p: Part) => new RegExp(banner[p.name] ?? `${p.name} started`).test(p.output());
    // The per-part checks below say which part exited or did not start (with its output).
    const up = await lastValueWithin(
      async () => parts.every(started) || parts.some((p) => p.child.exitCode !== null),
      (done) => done,
      240_000,
      500,
    );
    for (const p of parts) {
      expect(p.child.exitCode, `${p.name} exited:\n${p.output().slice(-3000)}`).toBeNull();
      expect(started(p), `${p.name} did not start:\n${p.output().slice(-3000)}`).toBe(true);
    }
    expect(up).toBe(true);
    // The parts that came up before Temporal waited and never gave up with the SDK's deadline error.
    for (const p of parts) expect(p.output()).not.toMatch(/could not start/);

    const api = `http://127.0.0.1:${apiPort}`;
    const call = async (method: string, route: string, token: string, body?: unknown) => {
      const res = await fetch(`${api}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as any };
    };
    const created = await call('PUT', '/v1/admin/tenants/parts', ADMIN, {});
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body.apiKey as string;
    const submitted = await waitFor(
      () =>
        call('POST', '/v1/runs', key, {
          agent: 'synthetic',
          input: { steps: 2, tokensPerStep: 50 },
          idempotencyKey: 'parts-1',
        }),
      (r) => r.status === 202 || r.status === 200,
      60_000,
      1_000,
    );
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const done = await waitFor(
      () => call('GET', `/v1/runs/${submitted.body.runId as string}`, key),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
      180_000,
      500,
    );
    expect(done.body.status).toBe('completed');

    // A triage run calls lookup, waits at its gate, and after approval pages: both tools on the tool
    // worker's queues, acting as the identities of the credentials it was given; the sink took the page.
    const triage = await call('POST', '/v1/runs', key, { agent: 'triage', input: { incident: 'disk full' } });
    expect(triage.status, JSON.stringify(triage.body)).toBe(202);
    const runRoute = `/v1/runs/${triage.body.runId as string}`;
    const gated = await waitFor(
      () => call('GET', runRoute, key),
      (r) => ['awaiting_approval', 'completed', 'failed', 'cancelled'].includes(r.body?.status),
      180_000,
      500,
    );
    expect(gated.body.status, JSON.stringify(gated.body)).toBe('awaiting_approval');
    expect((await call('POST', `${runRoute}/approve`, key, { note: 'go' })).status).toBe(200);
    const triaged = await waitFor(
      () => call('GET', runRoute, key),
      (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
      180_000,
      500,
    );
    expect(triaged.body.status, JSON.stringify(triaged.body)).toBe('completed');
    expect(triaged.body.toolCalls.map((c: any) => [c.tool, c.identity, c.outcome])).toEqual([
      ['lookup', identityOf('lookup', LOOKUP_CREDENTIAL, toolIdentitySalt(undefined, dataDir)), 'ok'],
      ['pager', identityOf('pager', PAGER_CREDENTIAL, toolIdentitySalt(undefined, dataDir)), 'ok'],
    ]);
    const delivered = (await (await fetch(`${sink}/summary`)).json()) as { deliveries: number };
    expect(delivered.deliveries).toBe(1);

    // Everything stops on SIGTERM (in reverse order of dependence, as compose does) and leaves no process
    // behind, the dev server included.
    for (const name of ['api', 'worker', 'tools', 'sink', 'sim', 'temporal']) {
      const p = part(name);
      const t0 = Date.now();
      expect(
        await stopPart(p, 90_000),
        `${p.name} still running after SIGTERM:\n${p.output().slice(-2000)}`,
      ).toBe(true);
      console.log(`${name} stopped in ${Date.now() - t0} ms`);
      expect(await p.exited, `${p.name} exit status:\n${p.output().slice(-2000)}`).toBe(0);
    }
    expect(parts.filter(groupAlive).map((p) => p.name)).toEqual([]);
  });
});

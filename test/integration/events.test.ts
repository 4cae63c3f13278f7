import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { spawnWorker } from '../../bench/lib/worker-child';
import { signPayload } from '../../src/api/events/signature';
import { runSpecQuery } from '../../src/contract/run-messages';
import {
  ADMIN,
  expectEffectsOnce,
  startExtraWorker,
  startTestStack,
  waitFor,
  type TestStack,
} from '../support/stack';
import { freePort } from '../../src/infra/cluster/child';

/**
 * Issue 13, part 1 on the real dev server: signed events deduplicated to one run, bad signatures
 * refused, an event answered 2xx survives the API's SIGKILL, a shed event is listed and replayed.
 */
const SOURCE = 'https://alerts.example.com';
const TRIGGER = {
  eventType: 'incident.opened',
  // Signed deliveries fire only triggers that name their source.
  sources: [SOURCE],
  filter: { 'data.severity': 'high' },
  agent: 'synthetic',
  input: { steps: '{{data.steps}}', tokensPerStep: 10, effect: true },
  // Each end user (the event's data.user) gets its own turns inside the tenant.
  fairnessKey: '{{data.user}}',
};
const cloudEvent = (id: string, steps = 1) =>
  JSON.stringify({
    specversion: '1.0',
    id,
    type: 'incident.opened',
    source: SOURCE,
    data: { severity: 'high', steps, user: 'user-42' },
  });

async function runExists(s: TestStack, runId: string): Promise<boolean> {
  try {
    await s.client.workflow.getHandle(runId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Whether the run's workflow has done any work: a completed workflow task (it may exist unstarted). */
async function runHasRun(s: TestStack, runId: string): Promise<boolean> {
  if (!(await runExists(s, runId))) return false;
  const history = await s.client.workflow.getHandle(runId).fetchHistory();
  return (history.events ?? []).some((e) => e.workflowTaskCompletedEventAttributes);
}

describe('events in, runs out (real dev server)', () => {
  let s: TestStack;
  let key: string;
  let secret: string;

  beforeAll(async () => {
    s = await startTestStack();
    key = await s.tenant('acme');
    expect((await s.call('PUT', '/v1/triggers/page', { token: key, body: TRIGGER })).status).toBe(201);
    const r = await s.call('POST', '/v1/webhook-secrets', { token: key, body: { source: SOURCE } });
    expect(r.status).toBe(201);
    secret = r.body.secret as string;
  });
  afterAll(async () => {
    await s?.close();
  });

  const deliver = (raw: string, t = Math.floor(Date.now() / 1000), sig = signPayload(secret, raw, t)) =>
    s.call('POST', '/v1/events?tenant=acme', {
      token: '',
      body: raw,
      headers: { 'content-type': 'application/json', 'fairway-signature': sig },
    });

  it('an event delivered 5 times (twice concurrently) with a valid signature starts exactly one run', async () => {
    const raw = cloudEvent('evt-dup-1');
    const first = await deliver(raw);
    expect(first.status).toBe(202);
    const runId = first.body.runs[0].runId as string;
    const concurrent = await Promise.all([deliver(raw), deliver(raw)]);
    const later = [await deliver(raw), await deliver(raw)];
    for (const r of [...concurrent, ...later]) {
      expect(r.status).toBe(200);
      expect(r.body.runs.map((x: { runId: string }) => x.runId)).toEqual([runId]);
    }
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (r) => r.body?.status === 'completed',
    );
    expect(done.body).toMatchObject({ status: 'completed', tenant: 'acme', agent: 'synthetic' });
    const view = await s.call('GET', '/v1/events/evt-dup-1', { token: key });
    expect(view.body).toMatchObject({
      outcome: 'started',
      runs: [{ runId, status: 'started', fairnessKey: 'user-42' }],
    });
    // The run carries the key the trigger took from the event (its spec, as a re-drive reads it).
    expect(await s.client.workflow.getHandle(runId).query(runSpecQuery)).toMatchObject({
      fairnessKey: 'user-42',
    });
    const runs = await waitFor(
      () => s.call('GET', '/v1/runs?limit=100', { token: key }),
      (r) => r.body.items.length >= 1,
    );
    expect(runs.body.items.map((x: { runId: string }) => x.runId)).toEqual([runId]);
    // One run's effect, counted where it lands: the sink, the simulator's call log, the step's runs.
    await expectEffectsOnce(s, 1);
  });

  it('a bad signature, an old timestamp or a replayed body gets 401 and starts nothing', async () => {
    const raw = cloudEvent('evt-bad-1');
    const now = Math.floor(Date.now() / 1000);
    const answers = [
      await deliver(raw, now, `t=${now},v1=${'0'.repeat(64)}`),
      await deliver(raw, now - 600), // a captured delivery, re-sent ten minutes later
      await deliver(cloudEvent('evt-bad-1', 2), now, signPayload(secret, raw, now)), // body swapped
      await deliver(raw, now, signPayload(secret, raw, now - 600).replace(`t=${now - 600}`, `t=${now}`)), // re-dated
      await deliver(raw, now, signPayload('whsec_not_ours', raw, now)),
    ];
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.body.error.code).toBe('unauthorized');
    }
    expect((await s.call('GET', '/v1/events/evt-bad-1', { token: key })).status).toBe(404);
    const runs = await s.call('GET', '/v1/runs?limit=100', { token: key });
    expect(runs.body.items).toHaveLength(1); // only the previous test's run
  });

  it('an event whose run was shed (budget) is listed with its outcome and Retry-After, and can be replayed', async () => {
    const poorKey = await s.tenant('poor', { budget: { tokens: 5, period: 'day' } });
    await s.call('PUT', '/v1/triggers/page', { token: poorKey, body: { ...TRIGGER, estimatedTokens: 1000 } });
    const body = JSON.parse(cloudEvent('evt-shed-1')) as unknown;
    expect((await s.call('POST', '/v1/events', { token: poorKey, body })).status).toBe(202);
    const shed = await waitFor(
      () => s.call('GET', '/v1/events/evt-shed-1', { token: poorKey }),
      (r) => r.body.runs[0].status !== 'pending',
    );
    expect(shed.body.outcome).toBe('retrying');
    expect(shed.body.runs[0].refusal).toMatchObject({ code: 'budget_exhausted' });
    expect(Number(shed.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const listed = await s.call('GET', '/v1/events?outcome=retrying', { token: poorKey });
    expect(listed.body.items.map((e: { eventId: string }) => e.eventId)).toEqual(['evt-shed-1']);
    const runId = shed.body.runs[0].runId as string;
    expect(await runExists(s, runId)).toBe(false);

    expect(
      (
        await s.call('PUT', '/v1/admin/tenants/poor', {
          body: { budget: { tokens: 1_000_000, period: 'day' } },
        })
      ).status,
    ).toBe(200);
    const replay = await s.call('POST', '/v1/events/evt-shed-1/replay', { token: poorKey });
    expect(replay.status).toBe(202);
    // A budgeted tenant created in the scheduler chain's first minute is held until the chain's usage
    // floor after its hold window (about 60 s after the stack started): the default 60-s wait could
    // end a second before the run did.
    const run = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: poorKey }),
      (r) => r.body?.status === 'completed',
      180_000,
    );
    expect(run.body.status).toBe('completed');
    expect((await s.call('GET', '/v1/events/evt-shed-1', { token: poorKey })).body.outcome).toBe('started');
  });

  it("an event's run over a per-run cap is refused as its input, not started (44, review)", async () => {
    const bigKey = await s.tenant('big');
    const over = await s.call('PUT', '/v1/triggers/huge', {
      token: bigKey,
      body: { ...TRIGGER, estimatedTokens: 2_000_000 },
    });
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body)).toMatch(/RUN_MAX_TOKENS/);
    const put = await s.call('PUT', '/v1/triggers/page', {
      token: bigKey,
      body: { ...TRIGGER, input: { steps: '{{data.steps}}', tokensPerStep: 10_000 } },
    });
    expect(put.status).toBe(201);
    const secretOf = await s.call('POST', '/v1/webhook-secrets', { token: bigKey, body: { source: SOURCE } });
    const raw = cloudEvent('evt-big-1', 200); // 200 steps × 10,000 tokens: twice RUN_MAX_TOKENS
    const t = Math.floor(Date.now() / 1000);
    const r = await s.call('POST', '/v1/events?tenant=big', {
      token: '',
      body: raw,
      headers: {
        'content-type': 'application/json',
        'fairway-signature': signPayload(secretOf.body.secret as string, raw, t),
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    expect(r.body.runs).toEqual([
      expect.objectContaining({
        status: 'invalid_input',
        refusal: expect.objectContaining({ message: expect.stringMatching(/RUN_MAX_TOKENS/) }),
      }),
    ]);
    expect(await runExists(s, r.body.runs[0].runId as string)).toBe(false);
    const runs = await s.call('GET', '/v1/runs?limit=100', { token: bigKey });
    expect(runs.body.items).toEqual([]);
  });

  it('an API SIGKILLed right after its 2xx still yields the run (another API process picks the event up)', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), `fairway-events-${s.id}-`));
    const port = await freePort();
    const env = {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TASK_QUEUE: s.config.temporal.taskQueue,
      SCHEDULER_WORKFLOW_ID: s.config.schedulerWorkflowId,
      DATA_DIR: dataDir,
      PORT: String(port),
      ADMIN_TOKEN: ADMIN,
    };
    const spawnApi = (n: number) =>
      spawnWorker({ env, buildId: `api-${n}`, entry: 'api', logFile: path.join(dataDir, `api-${n}.log`) });
    const url = `http://localhost:${port}`;
    const call = async (method: string, route: string, token: string, body?: unknown) => {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    let api = await spawnApi(1);
    let worker: { close(): Promise<void> } | undefined;
    try {
      const created = await call('PUT', '/v1/admin/tenants/crashy', ADMIN, {});
      expect(created.status).toBe(201);
      const tenantKey = created.body.apiKey as string;
      expect((await call('PUT', '/v1/triggers/page', tenantKey, TRIGGER)).status).toBe(201);

      // Every worker gone too, so the run cannot have run when the API dies: the 2xx rests on the
      // event's durable record alone. (Its workflow may exist: runs are started before they are offered.)
      await s.worker!.close();
      const accepted = await call('POST', '/v1/events', tenantKey, JSON.parse(cloudEvent('evt-crash-1')));
      await api.kill();
      expect(accepted.status).toBe(202);
      const runId = accepted.body.runs[0].runId as string;
      expect(await runHasRun(s, runId)).toBe(false);

      worker = await startExtraWorker(s);
      api = await spawnApi(2);
      const run = await waitFor(
        () => call('GET', `/v1/runs/${runId}`, tenantKey),
        (r) => r.body?.status === 'completed',
        120_000,
        500,
      );
      expect(run.body).toMatchObject({ status: 'completed', tenant: 'crashy' });
      const event = await call('GET', '/v1/events/evt-crash-1', tenantKey);
      expect(event.body).toMatchObject({ outcome: 'started', runs: [{ runId, status: 'started' }] });
      // The sender retries after the crash: deduplicated, the same run.
      const again = await call('POST', '/v1/events', tenantKey, JSON.parse(cloudEvent('evt-crash-1')));
      expect(again.status).toBe(200);
      expect(again.body.runs[0].runId).toBe(runId);
    } finally {
      await api.stop(30_000);
      await worker?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

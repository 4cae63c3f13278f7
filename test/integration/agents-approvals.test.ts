import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentTaskQueue } from '../../src/agent/define';
import { sha256Hex } from '../../src/api/crypto/keys';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * The API learns the agents of an agents module (AGENTS), sees whether a worker polls each agent's
 * task queue, and lists a human gate that waits, recording who decided and when.
 */
describe('agents and approvals through the API (real dev server)', () => {
  let s: TestStack;
  let key: string;
  beforeAll(async () => {
    s = await startTestStack({ AGENTS: 'test/unit/api/agent-modules/research.ts' });
    key = await s.tenant('acme');
  });
  afterAll(async () => {
    await s?.close();
  });

  const atGate = async (incident: string) => {
    const r = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'triage', input: { incident } },
    });
    expect(r.status).toBe(202);
    const runId = r.body.runId as string;
    await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (v) => v.body?.status === 'awaiting_approval',
      120_000,
    );
    return runId;
  };
  const approvals = () => s.call('GET', '/v1/approvals', { token: key });

  it("lists the module's agents; served follows the pollers of the agent's own task queue", async () => {
    const list = await s.call('GET', '/v1/agents', { token: key });
    expect(list.status).toBe(200);
    const names = (list.body.items as { name: string }[]).map((a) => a.name);
    expect(names).toEqual(['synthetic', 'triage', 'audit', 'research', 'short-summary']);
    expect((await s.call('GET', '/v1/agents/research', { token: key })).body).toMatchObject({
      input: { properties: { question: { type: 'string' } } },
      served: false,
    });
    // A run of an agent no worker polls yet is accepted: it waits for its worker.
    const early = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'research', input: { question: 'who?' } },
    });
    expect(early.status).toBe(202);
    // Its run is not this test's concern (the worker below runs no user agent): take it away.
    await s.call('POST', `/v1/runs/${early.body.runId as string}/cancel`, { token: key });
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const worker = await Worker.create({
      connection,
      namespace: s.config.temporal.namespace,
      taskQueue: agentTaskQueue(s.config.temporal.taskQueue, 'research'),
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    const running = worker.run();
    try {
      await waitFor(
        () => s.call('GET', '/v1/agents/research', { token: key }),
        (v) => v.body?.served === true,
        30_000,
        500,
      );
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
    expect((await s.call('GET', '/v1/agents/nope', { token: key })).body.error).toMatchObject({
      code: 'unknown_agent',
      details: { known: names },
    });
  }, 120_000);

  it('lists a triage run waiting at its gate, and records who approved it and when', async () => {
    const runId = await atGate('db-3 disk full');
    const listed = await waitFor(approvals, (v) =>
      (v.body?.items ?? []).some((i: { runId: string }) => i.runId === runId),
    );
    const item = listed.body.items.find((i: { runId: string }) => i.runId === runId);
    expect(item).toMatchObject({
      runId,
      tenant: 'acme',
      agent: 'triage',
      timeout: { seconds: expect.any(Number), onTimeout: 'escalate' },
      links: { approve: `/v1/runs/${runId}/approve` },
    });
    const other = await s.tenant('other');
    expect((await s.call('GET', '/v1/approvals', { token: other })).body.items).toEqual([]);
    const all = await s.call('GET', '/v1/approvals?tenant=acme', {});
    expect(all.body.items.map((i: { runId: string }) => i.runId)).toContain(runId);

    const before = Date.now();
    const approved = await s.call('POST', `/v1/runs/${runId}/approve`, { token: key, body: { note: 'go' } });
    expect(approved.status).toBe(200);
    expect(approved.body.by).toBe(`key:acme#${sha256Hex(key).slice(0, 12)}`);
    expect(Date.parse(approved.body.at)).toBeGreaterThanOrEqual(before - 1000);
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (v) => ['completed', 'failed'].includes(v.body?.status as string),
      60_000,
    );
    expect(done.body.status).toBe('completed');
    await waitFor(approvals, (v) => !(v.body?.items ?? []).some((i: { runId: string }) => i.runId === runId));
  }, 240_000);

  it("shows the triage gate's proposal and, once decided, who decided in the run's view", async () => {
    const runId = await atGate('api 500s');
    const listed = await waitFor(approvals, (v) =>
      (v.body?.items ?? []).some((i: { runId: string }) => i.runId === runId),
    );
    const item = listed.body.items.find((i: { runId: string }) => i.runId === runId);
    expect(item.proposal).not.toBeNull();
    expect(Date.parse(item.openedAt)).not.toBeNaN();
    expect(item.timeout.expiresAt).toEqual(expect.any(String));
    const rejected = await s.call('POST', `/v1/runs/${runId}/reject`, { body: {} });
    expect(rejected.body.by).toBe('admin');
    const view = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (v) => v.body?.status !== 'awaiting_approval',
    );
    expect(view.body.gate).toMatchObject({
      decision: 'reject',
      decidedBy: 'admin',
      decidedAt: rejected.body.at,
    });
  }, 240_000);

  it("with an approver key, only it decides the tenant's gates; the submitting key gets 403", async () => {
    const own = await s.tenant('gated');
    const created = await s.call('POST', '/v1/admin/tenants/gated/approver-key', {});
    expect(created.status).toBe(201);
    const approver = created.body.approverKey as string;
    const r = await s.call('POST', '/v1/runs', {
      token: own,
      body: { agent: 'triage', input: { incident: 'cache cold' } },
    });
    expect(r.status).toBe(202);
    const runId = r.body.runId as string;
    await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: approver }),
      (v) => v.body?.status === 'awaiting_approval',
      120_000,
    );
    const listed = await waitFor(
      () => s.call('GET', '/v1/approvals', { token: approver }),
      (v) => (v.body?.items ?? []).some((i: { runId: string }) => i.runId === runId),
    );
    expect(listed.status).toBe(200);
    const self = await s.call('POST', `/v1/runs/${runId}/approve`, { token: own, body: {} });
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe('forbidden');
    const submit = await s.call('POST', '/v1/runs', {
      token: approver,
      body: { agent: 'triage', input: { incident: 'x' } },
    });
    expect(submit.status).toBe(403);
    const approved = await s.call('POST', `/v1/runs/${runId}/approve`, { token: approver, body: {} });
    expect(approved.status).toBe(200);
    expect(approved.body.by).toBe(`approver:gated#${sha256Hex(approver).slice(0, 12)}`);
    const view = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: own }),
      (v) => v.body?.status !== 'awaiting_approval',
    );
    expect(view.body.gate).toMatchObject({ decision: 'approve', decidedBy: approved.body.by });
  }, 240_000);
});

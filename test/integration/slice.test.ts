import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliStatus } from '../support/cli';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

describe('vertical slice on a real Temporal server', () => {
  let s: TestStack;
  let key: string;
  const tenant = () => `slice-${s.id}`;

  beforeAll(async () => {
    s = await startTestStack();
    key = await s.tenant(tenant(), { weight: 1 });
  });
  afterAll(() => s?.close());

  it('answers health and readiness', async () => {
    expect((await s.call('GET', '/healthz', { token: '' })).status).toBe(200);
    const ready = await waitFor(
      () => s.call('GET', '/readyz', { token: '' }),
      (r) => r.status === 200,
      20_000,
    );
    expect(ready.status).toBe(200);
  });

  it('runs a synthetic unit through the scheduler and the model plane to completion', async () => {
    const submitted = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 50 }, idempotencyKey: 'slice-1' },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body.status).toBe('queued');
    const runId: string = submitted.body.runId;
    expect(submitted.body.links.self).toBe(`/v1/runs/${runId}`);

    const run = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (r) => r.body?.status === 'completed',
    );
    expect(run.body).toMatchObject({
      runId,
      tenant: tenant(),
      agent: 'synthetic',
      priority: 'standard',
      status: 'completed',
    });
    expect(run.body.usage.tokens).toBe(100);
    expect(run.body.admissionSeq).toBeGreaterThanOrEqual(1);
    for (const field of ['createdAt', 'admittedAt', 'finishedAt']) {
      expect(run.body[field]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(Date.parse(run.body.admittedAt)).toBeGreaterThanOrEqual(Date.parse(run.body.createdAt) - 1000);
    expect(Date.parse(run.body.finishedAt)).toBeGreaterThanOrEqual(Date.parse(run.body.admittedAt));

    const stats = (await (await fetch(`${s.simUrl}/admin/stats`)).json()) as { calls: number };
    expect(stats.calls).toBeGreaterThanOrEqual(2);

    const listed = await waitFor(
      () => s.call('GET', '/v1/runs?status=completed&limit=10', { token: key }),
      (r) => r.body?.items?.some((i: { runId: string }) => i.runId === runId),
      10_000,
    );
    expect(listed.body.items.find((i: { runId: string }) => i.runId === runId)).toMatchObject({
      tenant: tenant(),
      agent: 'synthetic',
      priority: 'standard',
      status: 'completed',
    });

    const again = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 50 }, idempotencyKey: 'slice-1' },
    });
    expect(again.status).toBe(200);
    expect(again.body.runId).toBe(runId);
  });

  it('answers the status query from the Temporal CLI', async () => {
    const status = await cliStatus(s.temporalAddress, s.config.schedulerWorkflowId);
    expect(status.mode).toBe('open');
    expect(status.counters.admitted).toBeGreaterThanOrEqual(1);
  });
});

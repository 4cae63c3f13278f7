import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantQuery, upsertTenantsUpdate } from '../../src/contract/scheduler-messages';
import { defaultTenantSettings } from '../../src/scheduler';
import { MAX_CORE_TENANTS } from '../../src/scheduler/limits';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * Issue 27, finding 4: a gated run holds nothing in the scheduler while it waits, so its tenant is
 * idle and may be evicted (after an hour idle at continue-as-new, or at once when the core is full).
 * Approved, the run must still complete: it brings its tenant back from the tenant store.
 */
describe('a gated run whose tenant was evicted while it waited (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ RUN_REOFFER_FIRST_SECONDS: '5', RUN_REOFFER_MAX_SECONDS: '10' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('is approved and completes, its tenant restored with the settings the store holds', async () => {
    const ops = await s.tenant('ops', { weight: 3 });
    const r = await s.call('POST', '/v1/runs', {
      token: ops,
      body: { agent: 'triage', input: { incident: 'queue backlog' } },
    });
    expect(r.status).toBe(202);
    const runId = r.body.runId as string;
    await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: ops }),
      (v) => v.body?.status === 'awaiting_approval',
      120_000,
    );
    // The core full of newer tenants evicts the idlest idle one: the gated run's.
    const scheduler = s.client.workflow.getHandle(s.config.schedulerWorkflowId);
    const fillers = Array.from({ length: MAX_CORE_TENANTS }, (_, i) => ({
      tenant: `filler-${i}`,
      settings: defaultTenantSettings(),
    }));
    for (let i = 0; i < fillers.length; i += 100)
      await scheduler.executeUpdate(upsertTenantsUpdate, { args: [fillers.slice(i, i + 100)] });
    expect(await scheduler.query(tenantQuery, 'ops')).toBeNull();

    const approved = await s.call('POST', `/v1/runs/${runId}/approve`, { token: ops, body: { note: 'go' } });
    expect(approved.status).toBe(200);
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: ops }),
      (v) => ['completed', 'failed'].includes(v.body?.status as string),
      60_000,
    );
    expect(done.body.status).toBe('completed');
    const back = await scheduler.query(tenantQuery, 'ops');
    expect(back?.settings.weight).toBe(3);
  }, 240_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitUpdate } from '../../src/contract/scheduler-messages';
import { startBareRun, startExtraWorker, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

describe('leases', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ LEASE_TTL_SECONDS: '2' });
  });
  afterAll(() => s?.close());

  it('gives the slot of a run whose worker vanished back at lease expiry; the run queues again when it returns', async () => {
    const tenant = `lease-${s.id}`;
    const key = await s.tenant(tenant);
    // The run lives on a task queue no worker polls: it is admitted, but nothing renews its lease.
    const orphanQueue = `orphan-${s.id}`;
    const runId = `run-${tenant}-${'0'.repeat(19)}1`; // the API's id form, which the scheduler requires
    const scheduler = s.client.workflow.getHandle(s.config.schedulerWorkflowId);
    // In a model pool of its own, which its second attempt must keep.
    const pool = `pool-${s.id}`;
    await startBareRun(s, runId, tenant, orphanQueue, { pool, input: { stepMs: 4000 } });
    const [accepted] = await scheduler.executeUpdate(submitUpdate, {
      args: [[{ runId, tenant, priority: 'standard', cost: 10, pool }]],
    });
    expect(accepted).toMatchObject({ accepted: true });

    const held = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.inFlight === 1,
      10_000,
    );
    expect(held.body.inFlight).toBe(1);
    const freed = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.counters.expired === 1,
      15_000,
    );
    expect(freed.body.inFlight).toBe(0);
    expect(freed.body.counters.expired).toBe(1);

    // Its worker comes back: the run learns its lease was revoked, queues again (attempt 1) in its
    // pool and completes.
    const worker = await startExtraWorker(s, orphanQueue);
    try {
      const again = await waitFor(
        () => s.call('GET', '/v1/admin/scheduler'),
        (v) => v.body.counters.admitted === 2 && v.body.inFlight === 1,
        30_000,
      );
      expect(again.body.pools?.[pool]?.inFlight, 'the second attempt counts in its pool').toBe(1);
      const done = await waitFor(
        () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
        (v) => v.body?.status === 'completed',
        30_000,
      );
      expect(done.body.status).toBe('completed');
      const after = (await s.call('GET', '/v1/admin/scheduler')).body;
      expect(after.counters.admitted).toBe(2);
      expect(after.counters.completed).toBe(1);
      expect(after.inFlight).toBe(0);
    } finally {
      await worker.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const UNITS = 2000;

describe('months of uptime: continue-as-new under load', () => {
  let s: TestStack;
  beforeAll(async () => {
    // A tiny history budget makes the scheduler continue-as-new every few dozen events.
    s = await startTestStack(
      { FLEET_CONCURRENCY: '20', MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
      {
        scheduler: { maxHistoryEvents: 10 },
      },
    );
  });
  afterAll(() => s?.close());

  it('survives 100+ continue-as-new cycles losing no unit and admitting none twice', async () => {
    const t = await s.tenant(`can-${s.id}`, { maxQueued: 10_000, maxInFlight: 20 });
    const batch = await s.call('POST', '/v1/batches', {
      token: t,
      body: {
        agent: 'synthetic',
        items: Array.from({ length: UNITS }, () => ({ steps: 1, tokensPerStep: 10, effect: true })),
      },
    });
    expect(batch.status).toBe(202);
    const done = await waitFor(
      () => s.call('GET', `/v1/batches/${batch.body.batchId}`, { token: t }),
      (v) => v.body?.completed === UNITS,
      420_000,
      2000,
    );
    expect(done.body).toMatchObject({ total: UNITS, completed: UNITS, failed: 0 });
    const status = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.counters.completed === UNITS,
      30_000,
    );
    console.log(`continue-as-new: ${status.body.history.continuedAsNew} cycles for ${UNITS} units`);
    expect(status.body.history.continuedAsNew).toBeGreaterThanOrEqual(100);
    expect(status.body.counters).toMatchObject({
      submitted: UNITS,
      admitted: UNITS,
      completed: UNITS,
      expired: 0,
    });
    expect(status.body.inFlight).toBe(0);
    const effects = await s.call('GET', '/v1/admin/effects/summary');
    expect(effects.body).toMatchObject({ effects: UNITS, duplicates: 0 });
  });
});

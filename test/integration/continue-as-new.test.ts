import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * Load comes in small batches, one after the other: each batch keeps the fleet's 20 slots busy with
 * a queue behind them, and the next comes as soon as it completes (polled every 250 ms). Cycles
 * are bound by time (a few round trips each), not by units: 100 cycles took 2,000–2,500 units in
 * rounds of 500 and 1,400 in rounds of 50, in about the same time, so the smaller rounds load the
 * shared dev server less for the same proof.
 */
const ROUND = 50;
const MAX_ROUNDS = 80;

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
    // Keep the load on until 100 cycles have passed.
    let units = 0;
    let cycles = 0;
    for (let round = 0; round < MAX_ROUNDS && cycles < 100; round++) {
      const batch = await s.call('POST', '/v1/batches', {
        token: t,
        body: {
          agent: 'synthetic',
          items: Array.from({ length: ROUND }, () => ({ steps: 1, tokensPerStep: 10, effect: true })),
        },
      });
      expect(batch.status).toBe(202);
      units += ROUND;
      const done = await waitFor(
        () => s.call('GET', `/v1/batches/${batch.body.batchId}`, { token: t }),
        (v) => v.body?.completed === ROUND,
        120_000,
        250,
      );
      expect(done.body).toMatchObject({ total: ROUND, completed: ROUND, failed: 0 });
      cycles = (await s.call('GET', '/v1/admin/scheduler')).body.history.continuedAsNew as number;
    }
    const status = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.counters.completed === units,
      30_000,
    );
    console.log(`continue-as-new: ${status.body.history.continuedAsNew} cycles for ${units} units`);
    expect(status.body.history.continuedAsNew).toBeGreaterThanOrEqual(100);
    expect(status.body.counters).toMatchObject({
      submitted: units,
      admitted: units,
      completed: units,
      expired: 0,
    });
    expect(status.body.inFlight).toBe(0);
    const effects = await s.call('GET', '/v1/admin/effects/summary');
    expect(effects.body).toMatchObject({ effects: units, duplicates: 0 });
  });
});

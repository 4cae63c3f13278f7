import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * Issue 3, "Flood": tenant A submits 10,000 units; one second later tenant B (same weight) submits
 * 10; fleet concurrency 50. All of B's units are admitted before A receives 100 further admissions
 * after B's submission; all 10,010 complete, none lost, none run twice.
 */
const A_UNITS = 10_000;
const B_UNITS = 10;

describe('flood: a tenant that dumps 10,000 units does not delay a tenant with 10', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '50', MODEL_TPM: '1000000000', MODEL_RPM: '100000000' });
  });
  afterAll(() => s?.close());

  it('admits all of B before A gets 100 more, and completes every unit exactly once', async () => {
    const a = await s.tenant(`flood-a-${s.id}`, { maxQueued: 20_000, maxInFlight: 50 });
    const b = await s.tenant(`flood-b-${s.id}`, { maxQueued: 20_000, maxInFlight: 50 });
    const unit = { steps: 1, tokensPerStep: 100, effect: true };

    const batchA = await s.call('POST', '/v1/batches', {
      token: a,
      body: { agent: 'synthetic', priority: 'standard', items: Array.from({ length: A_UNITS }, () => unit) },
    });
    expect(batchA.status).toBe(202);
    await new Promise((r) => setTimeout(r, 1000));

    const before = await s.call('GET', '/v1/admin/scheduler');
    const admittedAtB = before.body.counters.admitted as number;
    const runsB = await Promise.all(
      Array.from({ length: B_UNITS }, () =>
        s.call('POST', '/v1/runs', { token: b, body: { agent: 'synthetic', input: unit } }),
      ),
    );
    expect(runsB.map((r) => r.status)).toEqual(Array(B_UNITS).fill(202));

    const doneB = await Promise.all(
      runsB.map((r) =>
        waitFor(
          () => s.call('GET', `/v1/runs/${r.body.runId}`, { token: b }),
          (v) => v.body?.status === 'completed',
          300_000,
          500,
        ),
      ),
    );
    const seqs = doneB.map((r) => r.body.admissionSeq as number);
    expect(seqs.every((n) => Number.isInteger(n))).toBe(true);
    // Every admission in this scheduler is A's or B's: A's share between B's submission and B's last admission.
    const aAdmissionsMeanwhile = Math.max(...seqs) - admittedAtB - B_UNITS;
    console.log(`flood: A received ${aAdmissionsMeanwhile} admissions while B's ${B_UNITS} were admitted`);
    expect(aAdmissionsMeanwhile).toBeLessThan(100);

    const batch = await waitFor(
      () => s.call('GET', `/v1/batches/${batchA.body.batchId}`, { token: a }),
      (v) => v.body?.completed === A_UNITS,
      480_000,
      2000,
    );
    expect(batch.body).toMatchObject({
      total: A_UNITS,
      completed: A_UNITS,
      failed: 0,
      cancelled: 0,
      queued: 0,
      running: 0,
    });

    const status = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.counters.completed === A_UNITS + B_UNITS,
      30_000,
    );
    expect(status.body.counters).toMatchObject({
      admitted: A_UNITS + B_UNITS,
      completed: A_UNITS + B_UNITS,
      expired: 0,
    });
    expect(status.body.inFlight).toBe(0);
    expect(status.body.queued.total).toBe(0);

    const effects = await s.call('GET', '/v1/admin/effects/summary');
    expect(effects.body).toMatchObject({ effects: A_UNITS + B_UNITS, duplicates: 0 });
  });
});

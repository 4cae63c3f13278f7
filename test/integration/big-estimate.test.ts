import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * One run declaring the per-run cap of 1,000,000 estimated tokens must not stop the fleet. The
 * governor admits 600,000 tokens a minute, so with 60 s leases at most 600,000 tokens may be in
 * flight: the big run fits only once nothing else runs. Tenant B keeps 5 long standard runs in
 * flight; B's interactive runs submitted after A's big one are admitted while it waits (before
 * it, by admission sequence), and the big one is admitted once B's long runs end, and completes.
 */
describe('a run with a huge declared estimate (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({
      FLEET_CONCURRENCY: '100',
      LEASE_TTL_SECONDS: '60',
      GOVERNOR_INITIAL_TPM: '600000',
      GOVERNOR_MAX_TPM: '600000',
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
    });
  });
  afterAll(() => s?.close());

  /** The run's admission sequence number, once it has one. */
  const seqOf = (token: string, id: string): Promise<number> =>
    waitFor(
      () => s.call('GET', `/v1/runs/${id}`, { token }),
      (v) => v.body?.admittedAt != null && v.body?.admissionSeq != null,
      120_000,
      200,
    ).then((v) => v.body.admissionSeq as number);

  it("admits another tenant's interactive runs while the big one waits, then the big one", async () => {
    const a = await s.tenant(`big-${s.id}`);
    const b = await s.tenant(`busy-${s.id}`, { maxInFlight: 50 });
    const long: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.call('POST', '/v1/runs', {
        token: b,
        body: {
          agent: 'synthetic',
          priority: 'standard',
          input: { steps: 1, tokensPerStep: 10, stepMs: 12_000 },
        },
      });
      expect(r.status).toBe(202);
      long.push(r.body.runId as string);
    }
    for (const id of long) await seqOf(b, id);

    const big = await s.call('POST', '/v1/runs', {
      token: a,
      body: {
        agent: 'synthetic',
        priority: 'interactive',
        estimatedTokens: 1_000_000,
        input: { steps: 1, tokensPerStep: 100 },
      },
    });
    expect(big.status).toBe(202);
    const bigId = big.body.runId as string;
    const quick: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await s.call('POST', '/v1/runs', {
        token: b,
        body: { agent: 'synthetic', priority: 'interactive', input: { steps: 1, tokensPerStep: 10 } },
      });
      expect(r.status).toBe(202);
      quick.push(r.body.runId as string);
    }
    const quickSeqs: number[] = [];
    for (const id of quick) quickSeqs.push(await seqOf(b, id));
    // While B's interactive runs went, the big one still waited, and said for what.
    const waiting = await s.call('GET', `/v1/runs/${bigId}`, { token: a });
    if (typeof waiting.body.admissionSeq !== 'number') {
      expect(waiting.body.waitingOn?.code).toBe('governor');
    }
    const bigSeq = await seqOf(a, bigId);
    for (const q of quickSeqs) expect(q).toBeLessThan(bigSeq);
    for (const id of quick)
      await waitFor(
        () => s.call('GET', `/v1/runs/${id}`, { token: b }),
        (v) => v.body.status === 'completed',
        120_000,
        250,
      );
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${bigId}`, { token: a }),
      (v) => v.body.status === 'completed',
      180_000,
      500,
    );
    expect(done.body.status).toBe('completed');
  });
});

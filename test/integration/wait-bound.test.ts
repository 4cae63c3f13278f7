import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * The door's bound on the expected wait, on a real stack: the governor admits 60,000 tokens a minute
 * (its start and its ceiling), so runs of 10,000 tokens go at one every 10 s, whatever the machine's
 * speed. MAX_WAIT_STANDARD_SECONDS is 15: with one run in flight (the tenant's cap) and one queued, a
 * third would wait about 20 s and is answered 429 wait_too_long with a Retry-After; a patch lifts the
 * bound live; every run accepted completes.
 */
const RUN = { agent: 'synthetic', input: { steps: 10, tokensPerStep: 1000 } };

describe("the door's bound on the expected wait (real stack)", () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
      GOVERNOR_INITIAL_TPM: '60000',
      GOVERNOR_MAX_TPM: '60000',
      MAX_WAIT_STANDARD_SECONDS: '15',
    });
  });
  afterAll(() => s?.close());

  it('answers 429 wait_too_long to a run that would wait longer than its lane allows; a patch lifts it', async () => {
    const key = await s.tenant(`waits-${s.id}`, { maxInFlight: 1 });
    const status = await s.call('GET', '/v1/admin/scheduler');
    expect(status.body.config.maxWaitSeconds).toEqual({ standard: 15 });
    const submit = () => s.call('POST', '/v1/runs', { token: key, body: RUN });
    const first = await submit();
    const second = await submit();
    expect([first.status, second.status]).toEqual([202, 202]);
    const third = await submit();
    expect(third.status, JSON.stringify(third.body)).toBe(429);
    expect(third.body.error.code).toBe('wait_too_long');
    expect(third.body.error.message).toMatch(
      /standard work would wait about \d+ s; this lane's bound is 15 s/,
    );
    const retryAfter = Number(third.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Interactive work has no bound here: it is taken.
    const urgent = await s.call('POST', '/v1/runs', {
      token: key,
      body: { ...RUN, priority: 'interactive' },
    });
    expect(urgent.status).toBe(202);

    const lifted = await s.call('PATCH', '/v1/admin/scheduler', {
      body: { maxWaitSeconds: { standard: null } },
    });
    expect(lifted.status).toBe(200);
    expect(lifted.body.config.maxWaitSeconds).toBeUndefined();
    const fourth = await submit();
    expect(fourth.status).toBe(202);

    const ids = [first, second, urgent, fourth].map((r) => r.body.runId as string);
    const ended = await Promise.all(
      ids.map((id) =>
        waitFor(
          () => s.call('GET', `/v1/runs/${id}`, { token: key }),
          (r) => ['completed', 'failed', 'cancelled'].includes(r.body?.status),
          180_000,
          500,
        ),
      ),
    );
    expect(ended.map((r) => r.body.status)).toEqual(ids.map(() => 'completed'));
    // Counted as a shed reason of its own.
    const metrics = await s.call<string>('GET', '/metrics');
    expect(String(metrics.body)).toMatch(/fairway_sheds_total\{reason="wait_too_long"\} 1\b/);
  });
});

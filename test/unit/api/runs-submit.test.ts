import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { bearer, synthetic, useHarness } from './harness';

describe('POST /v1/runs', () => {
  const h = useHarness({ tenants: ['acme'] });
  const post = (body: unknown, headers: Record<string, string> = {}) => h.submit(h.keys.acme!, body, headers);

  it('accepts a run: 202, Location, the scheduler told its estimate, the workflow started with defaults', async () => {
    const res = await post({ agent: 'synthetic', input: { steps: 4, tokensPerStep: 50 } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      runId: expect.stringMatching(/^run-acme-[0-9a-f]{20}$/),
      status: 'queued',
      links: { self: `/v1/runs/${res.body.runId}` },
    });
    expect(res.headers.location).toBe(`/v1/runs/${res.body.runId}`);
    expect(h.fleet.submitCalls).toEqual([
      [{ runId: res.body.runId, tenant: 'acme', priority: 'standard', cost: 200 }],
    ]);
    expect(h.fleet.startRunCalls[0]).toMatchObject({
      runId: res.body.runId,
      agent: 'synthetic',
      input: { steps: 4, tokensPerStep: 50, stepMs: 0, effect: false },
      estimatedTokens: 200,
      createdAt: '2025-06-01T12:00:00.000Z',
    });
  });

  it('uses estimatedTokens and priority when given, and the agent estimate otherwise', async () => {
    await post({ ...synthetic(1), priority: 'interactive', estimatedTokens: 999 });
    await post({ agent: 'audit', input: { targets: ['a', 'b', 'c'] } });
    await post({ agent: 'triage', input: { incident: 'disk full', severity: 'high' } });
    expect(h.fleet.submitCalls.map((c) => [c[0]?.priority, c[0]?.cost])).toEqual([
      ['interactive', 999],
      ['standard', 1500],
      ['standard', 1500],
    ]);
  });

  it('carries a fairness key to the scheduler and into the run; the same idempotency key with another is a conflict', async () => {
    const res = await post({ ...synthetic(1), fairnessKey: 'user-42', idempotencyKey: 'k-1' });
    expect(res.status).toBe(202);
    expect(h.fleet.submitCalls[0]).toEqual([expect.objectContaining({ fairnessKey: 'user-42' })]);
    expect(h.fleet.startRunCalls[0]).toMatchObject({ fairnessKey: 'user-42' });
    const other = await post({ ...synthetic(1), fairnessKey: 'user-43', idempotencyKey: 'k-1' });
    expect(other.status).toBe(422);
    // Without a key the unit names none: the tenant's default key.
    await post(synthetic(1));
    expect(h.fleet.submitCalls[1]?.[0]).not.toHaveProperty('fairnessKey');
  });

  it('never reserves below the agent estimate: a client may raise it, not lower it', async () => {
    // The agent's estimate is 20 × 1000 tokens; the client claims 1.
    await post({ agent: 'synthetic', input: { steps: 20, tokensPerStep: 1000 }, estimatedTokens: 1 });
    await post({ agent: 'audit', input: { targets: ['a', 'b'] }, estimatedTokens: 5000 });
    expect(h.fleet.submitCalls.map((c) => c[0]?.cost)).toEqual([20_000, 5000]);
    expect(h.fleet.startRunCalls[0]).toMatchObject({ estimatedTokens: 20_000 });
  });

  it('lists every bad field by path, and changes nothing', async () => {
    const cases: [unknown, string[]][] = [
      [{ agent: 'synthetic', input: {} }, ['input.steps']],
      [
        { agent: 'synthetic', input: { steps: 0, tokensPerStep: 'x', bogus: 1 } },
        ['input.bogus', 'input.steps', 'input.tokensPerStep'],
      ],
      [
        { agent: 'synthetic', input: { steps: 1 }, priority: 'urgent', estimatedTokens: 0 },
        ['estimatedTokens', 'priority'],
      ],
      [{ agent: 'triage', input: { incident: '' } }, ['input.incident']],
      [{ agent: 'audit', input: { targets: [] } }, ['input.targets']],
      [{ input: { steps: 1 } }, ['agent']],
      [{ ...synthetic(), idempotencyKey: 'k'.repeat(256) }, ['idempotencyKey']],
      [{ ...synthetic(), fairnessKey: 'user 42' }, ['fairnessKey']],
      [{ ...synthetic(), fairnessKey: '#1' }, ['fairnessKey']],
      [{ ...synthetic(), fairnessKey: 'k'.repeat(65) }, ['fairnessKey']],
      [[1, 2], ['(body)']],
    ];
    for (const [body, paths] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect((res.body.error.details as { path: string }[]).map((d) => d.path).sort()).toEqual(paths);
    }
    expect(h.fleet.submitCalls).toHaveLength(0);
    expect(h.fleet.startRunCalls).toHaveLength(0);
    expect(await h.store.idempotency.count()).toBe(0);
  });

  it('answers malformed JSON, a missing body and an oversized body without a 5xx', async () => {
    const malformed = await request(h.app)
      .post('/v1/runs')
      .set(bearer(h.keys.acme!))
      .set('Content-Type', 'application/json')
      .send('{"agent":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_request');
    const empty = await request(h.app).post('/v1/runs').set(bearer(h.keys.acme!));
    expect(empty.status).toBe(400);
    const big = await post({ ...synthetic(), pad: 'x'.repeat(1_100_000) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    expect(h.fleet.submitCalls).toHaveLength(0);
  });

  it('answers 404 unknown_agent for an agent not in the catalog', async () => {
    for (const agent of ['nope', 'constructor', '__proto__']) {
      const res = await post({ agent, input: {} });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('unknown_agent');
    }
    expect(h.fleet.submitCalls).toHaveLength(0);
  });

  it('sheds with queue_full, budget_exhausted and draining, each with Retry-After, leaving no idempotency row', async () => {
    const small = await h.tenant('small', { maxQueued: 1, budget: { tokens: 500, period: 'day' } });
    const as = (body: object, k = small) => h.submit(k, body);
    expect((await as(synthetic(1))).status).toBe(202);
    const full = await as({ ...synthetic(1), idempotencyKey: 'full' });
    expect(full.status).toBe(429);
    expect(full.body.error.code).toBe('queue_full');
    expect(full.headers['retry-after']).toBe('1'); // one unit ahead, a cold fleet admits it within a second

    h.fleet.tick(); // the first run is admitted: 100 of the 500 tokens reserved
    const broke = await as({ ...synthetic(5), idempotencyKey: 'broke' });
    expect(broke.status).toBe(429);
    expect(broke.body.error.code).toBe('budget_exhausted');
    expect(broke.headers['retry-after']).toBe(String(12 * 3600)); // 12:00 to the end of the UTC day

    await h.fleet.drain('refuse');
    const draining = await as({ ...synthetic(), idempotencyKey: 'drain' }, h.keys.acme);
    expect(draining.status).toBe(503);
    expect(draining.body.error.code).toBe('draining');
    // Until the in-flight run's lease could run out: one lease TTL from its admission.
    expect(draining.headers['retry-after']).toBe(String(h.fleet.status().config.leaseTtlSeconds));
    expect(await h.store.idempotency.count()).toBe(0);
    // Runs start before they are submitted; each refused one is discarded, so only the first remains.
    expect(h.fleet.startRunCalls).toHaveLength(4);
    expect(h.fleet.discarded).toHaveLength(3);
    expect(h.fleet.runCount).toBe(1);

    await h.fleet.drain('hold');
    expect((await as(synthetic(), h.keys.acme)).status).toBe(202);
  });

  it('re-syncs a tenant the scheduler forgot and submits again', async () => {
    h.fleet.resetScheduler();
    const res = await post(synthetic());
    expect(res.status).toBe(202);
    expect(h.fleet.submitCalls).toHaveLength(2);
    expect(h.fleet.tenantSettings('acme')).toMatchObject({ maxQueued: 100 });
    expect(h.fleet.status().queued.total).toBe(1);
  });
});

describe('POST /v1/runs at a slow request rate', () => {
  const h = useHarness({ ratePerSecond: 1, tenants: ['acme', 'other'] });

  it('rate-limits per tenant with a token bucket (burst twice the rate) and an honest Retry-After', async () => {
    const [k, other] = [h.keys.acme!, h.keys.other!];
    expect((await h.submit(k)).status).toBe(202);
    expect((await h.submit(k)).status).toBe(202);
    const limited = await h.submit(k);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('1');
    expect((await h.submit(other)).status).toBe(202);
    h.clock.now += 1000;
    expect((await h.submit(k)).status).toBe(202);
    expect(h.fleet.submitCalls).toHaveLength(4);
  });
});

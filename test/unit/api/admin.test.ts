import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GOVERNOR } from '../../../src/scheduler';
import { bearer, synthetic, useHarness } from './harness';

describe('operator endpoints', () => {
  const h = useHarness();

  it('reads the scheduler status', async () => {
    const res = await request(h.app).get('/v1/admin/scheduler').set(h.admin());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      mode: 'open',
      intake: 'open',
      config: { concurrency: 100 },
      inFlight: 0,
      // A cold governor starts wide open: the fleet's concurrency binds until the provider pushes back.
      governor: { concurrencyLimit: DEFAULT_GOVERNOR.maxConcurrency, throttledRecently: false },
    });
  });

  it('patches fleet settings live and rejects empty or out-of-range patches', async () => {
    const ok = await request(h.app)
      .patch('/v1/admin/scheduler')
      .set(h.admin())
      .send({ concurrency: 7, floors: { batch: 0.2 } });
    expect(ok.status).toBe(200);
    expect(ok.body.config).toMatchObject({ concurrency: 7, floors: { standard: 0.1, batch: 0.2 } });
    const cases: [unknown, string[]][] = [
      [{}, ['(body)']],
      [{ floors: {} }, ['floors']],
      [
        { concurrency: 0, floors: { standard: 0.6 }, leaseTtlSeconds: 4 },
        ['concurrency', 'floors.standard', 'leaseTtlSeconds'],
      ],
      [{ concurrency: 100_001, extra: true }, ['concurrency', 'extra']],
    ];
    for (const [body, paths] of cases) {
      const res = await request(h.app)
        .patch('/v1/admin/scheduler')
        .set(h.admin())
        .send(body as object);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((res.body.error.details as { path: string }[]).map((d) => d.path).sort()).toEqual(paths);
    }
    expect(h.fleet.status().config.concurrency).toBe(7);
  });

  it('patches the interactive reserve live and refuses one above 0.5', async () => {
    const ok = await request(h.app)
      .patch('/v1/admin/scheduler')
      .set(h.admin())
      .send({ concurrency: 40, interactiveReserve: 0.1 });
    expect(ok.status).toBe(200);
    expect(ok.body.config).toMatchObject({ concurrency: 40, interactiveReserve: 0.1, reservedSlots: 4 });
    for (const interactiveReserve of [0.6, -0.1, '0.1']) {
      const res = await request(h.app)
        .patch('/v1/admin/scheduler')
        .set(h.admin())
        .send({ interactiveReserve });
      expect(res.status, String(interactiveReserve)).toBe(400);
      expect((res.body.error.details as { path: string }[]).map((d) => d.path)).toEqual([
        'interactiveReserve',
      ]);
    }
    expect(h.fleet.status().config.interactiveReserve).toBe(0.1);
  });

  it("patches a lane's wait bound live: a submission expected to wait longer gets 429 wait_too_long", async () => {
    const key = await h.tenant('waits');
    // 100,000 tokens a run at the cold governor's 2,000,000 a minute: a third of a run a second.
    const big = { agent: 'synthetic', input: { steps: 20, tokensPerStep: 5000 } };
    const ok = await request(h.app)
      .patch('/v1/admin/scheduler')
      .set(h.admin())
      .send({ maxWaitSeconds: { standard: 5, batch: 3600 } });
    expect(ok.status).toBe(200);
    expect(ok.body.config.maxWaitSeconds).toEqual({ standard: 5, batch: 3600 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await h.submit(key, big));
    expect(answers.map((r) => r.status)).toEqual([202, 429, 429]);
    expect(answers[1]!.body.error).toMatchObject({ code: 'wait_too_long' });
    expect(answers[1]!.body.error.message).toMatch(/would wait about 6 s; this lane's bound is 5 s/);
    expect(Number(answers[1]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    for (const maxWaitSeconds of [
      {},
      { standard: 0 },
      { standard: 86_401 },
      { urgent: 5 },
      { standard: '5' },
    ]) {
      const res = await request(h.app).patch('/v1/admin/scheduler').set(h.admin()).send({ maxWaitSeconds });
      expect(res.status, JSON.stringify(maxWaitSeconds)).toBe(400);
    }
    // null removes a lane's bound; the other lane keeps its own.
    const cleared = await request(h.app)
      .patch('/v1/admin/scheduler')
      .set(h.admin())
      .send({ maxWaitSeconds: { standard: null } });
    expect(cleared.body.config.maxWaitSeconds).toEqual({ batch: 3600 });
    expect((await h.submit(key, big)).status).toBe(202);
  });

  it('drains (refuse by default, or hold) and resumes', async () => {
    const key = await h.tenant('acme');
    const drained = await request(h.app).post('/v1/admin/drain').set(h.admin());
    expect(drained.status).toBe(200);
    expect(drained.body).toMatchObject({ intake: 'refuse', mode: 'drained' });
    expect((await h.submit(key)).status).toBe(503);
    const hold = await request(h.app).post('/v1/admin/drain').set(h.admin()).send({ intake: 'hold' });
    expect(hold.body.intake).toBe('hold');
    expect((await h.submit(key)).status).toBe(202);
    expect(
      (await request(h.app).post('/v1/admin/drain').set(h.admin()).send({ intake: 'later' })).status,
    ).toBe(400);
    expect(h.fleet.status().intake).toBe('hold');
    const resumed = await request(h.app).post('/v1/admin/resume').set(h.admin());
    expect(resumed.body).toMatchObject({ mode: 'open', intake: 'open' });
  });

  it('reports effect store totals', async () => {
    await h.fleet.effects.apply('run-a:email', {});
    await h.fleet.effects.apply('run-a:email', {});
    await h.fleet.effects.apply('run-b:email', {});
    const res = await request(h.app).get('/v1/admin/effects/summary').set(h.admin());
    expect(res.body).toEqual({ effects: 2, attempts: 3, duplicates: 0 });
  });
});

describe('GET /v1/tenants/me', () => {
  const h = useHarness();

  it('shows settings, backlog by priority, in-flight and ledger', async () => {
    const key = await h.tenant('acme', { budget: { tokens: 10_000, period: 'day' } });
    const interactive = { ...synthetic(2), priority: 'interactive' };
    const first = await h.submit(key, interactive);
    h.fleet.tick();
    h.fleet.complete(first.body.runId, { usedTokens: 42 });
    await h.submit(key, interactive);
    h.fleet.tick(); // admitted: 200 tokens reserved
    await h.submit(key, interactive); // queued
    const res = await request(h.app).get('/v1/tenants/me').set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tenant: 'acme',
      settings: {
        weight: 1,
        maxQueued: 100,
        maxInFlight: 10,
        budget: { tokens: 10_000, period: 'day' },
        onBudgetExhausted: 'fail',
      },
      queued: { total: 1, byPriority: { interactive: 1, standard: 0, batch: 0 } },
      inFlight: 1,
      ledger: {
        budget: 10_000,
        period: 'day',
        reserved: 200,
        spent: 42,
        remaining: 9758,
        periodStart: expect.any(String),
      },
    });
  });

  it('re-syncs a tenant the scheduler forgot', async () => {
    const key = await h.tenant('acme');
    h.fleet.resetScheduler();
    const res = await request(h.app).get('/v1/tenants/me').set(bearer(key));
    expect(res.status).toBe(200);
    expect(h.fleet.tenantSettings('acme')).toBeDefined();
  });
});

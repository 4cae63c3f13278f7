import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { bearer, synthetic, useHarness } from './harness';

describe('reading and steering runs', () => {
  const h = useHarness({ tenants: ['acme', 'rival'] });
  const acme = () => h.keys.acme!;
  const rival = () => h.keys.rival!;
  let runId: string;
  beforeEach(async () => {
    runId = (await h.submit(acme())).body.runId as string;
  });

  it('shows a run to its tenant and to the admin, and to nobody else (404, same as missing)', async () => {
    const own = await request(h.app).get(`/v1/runs/${runId}`).set(bearer(acme()));
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      runId,
      tenant: 'acme',
      agent: 'synthetic',
      priority: 'standard',
      status: 'queued',
      waitingOn: { lane: 'standard', position: 1 }, // the core's explanation
    });
    expect((await request(h.app).get(`/v1/runs/${runId}`).set(h.admin())).status).toBe(200);
    const foreign = await request(h.app).get(`/v1/runs/${runId}`).set(bearer(rival()));
    const missingId = 'run-acme-00000000000000000000';
    const missing = await request(h.app).get(`/v1/runs/${missingId}`).set(bearer(rival()));
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body).replace(runId, 'ID')).toBe(
      JSON.stringify(missing.body).replace(missingId, 'ID'),
    );
    for (const action of ['cancel', 'approve', 'reject']) {
      expect((await request(h.app).post(`/v1/runs/${runId}/${action}`).set(bearer(rival()))).status).toBe(
        404,
      );
    }
    expect(h.fleet.run(runId)?.status).toBe('queued');
    h.fleet.tick();
    const admitted = await request(h.app).get(`/v1/runs/${runId}`).set(bearer(acme()));
    expect(admitted.body).toMatchObject({ status: 'running', admissionSeq: 1, waitingOn: null });
  });

  it("explains a queued run by its fairness key: the key and its place among the tenant's keys", async () => {
    const post = (fairnessKey: string) =>
      request(h.app)
        .post('/v1/runs')
        .set(bearer(acme()))
        .send({ ...synthetic(1), fairnessKey });
    for (let i = 0; i < 3; i++) await post('whale');
    const first = (await post('user-42')).body.runId as string;
    const second = (await post('user-42')).body.runId as string;
    const waiting = async (id: string) =>
      (await request(h.app).get(`/v1/runs/${id}`).set(bearer(acme()))).body.waitingOn;
    // Round one serves each key once (the default key's run of beforeEach, the whale's first, this
    // user's first; equal tags break on the key's stored name): 3 whale runs do not put it 3 back.
    const w1 = await waiting(first);
    expect(w1).toMatchObject({ fairnessKey: 'user-42', keyPosition: { keysQueued: 3, unitsAheadInKey: 0 } });
    expect(w1.keyPosition.keysAhead).toBeLessThanOrEqual(2);
    expect(w1.keyPosition.unitsAheadInTenant).toBe(w1.keyPosition.keysAhead);
    expect(w1.position).toBe(w1.keyPosition.unitsAheadInTenant + 1);
    const w2 = await waiting(second);
    expect(w2.keyPosition).toMatchObject({ keysAhead: 2, unitsAheadInKey: 1 });
    expect(w2.keyPosition.unitsAheadInTenant).toBeLessThanOrEqual(4);
  });

  it("lists only the caller's runs, filters, pages, and validates the query", async () => {
    await h.submit(rival());
    for (let i = 0; i < 3; i++) await h.submit(acme(), { ...synthetic(), priority: 'batch' });
    const all = await request(h.app).get('/v1/runs').set(bearer(acme()));
    expect(all.body.items).toHaveLength(4);
    expect(all.body.items.every((r: { tenant: string }) => r.tenant === 'acme')).toBe(true);
    const batch = await request(h.app).get('/v1/runs?priority=batch&limit=2').set(bearer(acme()));
    expect(batch.body.items).toHaveLength(2);
    const next = await request(h.app)
      .get(`/v1/runs?priority=batch&limit=2&cursor=${batch.body.nextCursor}`)
      .set(bearer(acme()));
    expect(next.body).toMatchObject({
      items: [expect.objectContaining({ priority: 'batch' })],
      nextCursor: null,
    });
    // A tenant cannot widen its view with ?tenant=.
    expect((await request(h.app).get('/v1/runs?tenant=rival').set(bearer(acme()))).body.items).toHaveLength(
      4,
    );
    expect((await request(h.app).get('/v1/runs?tenant=rival').set(h.admin())).body.items).toHaveLength(1);
    for (const q of ['status=done', 'priority=urgent', 'limit=0', 'limit=501', 'limit=abc']) {
      const bad = await request(h.app).get(`/v1/runs?${q}`).set(bearer(acme()));
      expect(bad.status, q).toBe(400);
      expect(bad.body.error.details[0].path).toBe(q.split('=')[0]);
    }
  });

  it('filters the list by agent, idempotency key and start time', async () => {
    h.clock.now += 60_000;
    const keyed = await h.submit(acme(), synthetic(), { 'idempotency-key': 'order-7' });
    const list = async (q: string, who = bearer(acme())) => {
      const r = await request(h.app).get(`/v1/runs?${q}`).set(who);
      expect(r.status, q).toBe(200);
      return (r.body.items as { runId: string }[]).map((i) => i.runId);
    };
    expect(await list('agent=synthetic')).toHaveLength(2);
    expect(await list('agent=triage')).toEqual([]);
    expect(await list('idempotencyKey=order-7')).toEqual([keyed.body.runId]);
    expect(await list('idempotencyKey=order-7&tenant=acme', h.admin())).toEqual([keyed.body.runId]);
    expect(await list('idempotencyKey=nobody-used-it')).toEqual([]);
    // Keys are the tenant's own: another tenant's key names none of its runs.
    expect(await list('idempotencyKey=order-7', bearer(rival()))).toEqual([]);
    const admin = await request(h.app).get('/v1/runs?idempotencyKey=order-7').set(h.admin());
    expect(admin.status).toBe(400);
    expect(await list('createdAfter=2025-06-01T12:00:30Z')).toEqual([keyed.body.runId]);
    expect(await list('createdBefore=2025-06-01T12:00:30Z')).toEqual([runId]);
    expect(await list('createdAfter=2025-06-01T12:00:00Z&createdBefore=2025-06-01T12:00:30%2B00:00')).toEqual(
      [runId],
    );
    for (const q of ['createdAfter=yesterday', 'agent=a%20b', 'createdBefore=2025-06-01']) {
      const bad = await request(h.app).get(`/v1/runs?${q}`).set(bearer(acme()));
      expect(bad.status, q).toBe(400);
    }
  });

  it("shows a run's steps to whoever may see the run", async () => {
    const own = await request(h.app).get(`/v1/runs/${runId}/steps`).set(bearer(acme()));
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ runId, items: [] });
    expect((await request(h.app).get(`/v1/runs/${runId}/steps`).set(h.admin())).status).toBe(200);
    expect((await request(h.app).get(`/v1/runs/${runId}/steps`).set(bearer(rival()))).status).toBe(404);
  });

  it('cancels a run once; a finished run answers 409 conflict', async () => {
    const first = await request(h.app).post(`/v1/runs/${runId}/cancel`).set(bearer(acme()));
    expect(first.status).toBe(202);
    expect(h.fleet.run(runId)?.status).toBe('cancelled');
    const second = await request(h.app).post(`/v1/runs/${runId}/cancel`).set(bearer(acme()));
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'conflict', details: { status: 'cancelled' } });
  });

  it('answers a human gate only while the run awaits approval', async () => {
    const early = await request(h.app).post(`/v1/runs/${runId}/approve`).set(bearer(acme()));
    expect(early.status).toBe(409);
    h.fleet.tick();
    h.fleet.awaitApproval(runId);
    const bad = await request(h.app).post(`/v1/runs/${runId}/approve`).set(bearer(acme())).send({ note: 5 });
    expect(bad.status).toBe(400);
    expect(h.fleet.run(runId)?.status).toBe('awaiting_approval');
    const ok = await request(h.app).post(`/v1/runs/${runId}/reject`).set(bearer(acme())).send({ note: 'no' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ runId, decision: 'rejected' });
    expect((await request(h.app).post(`/v1/runs/${runId}/approve`).set(bearer(acme()))).status).toBe(409);
  });

  it('answers 404 for ids that cannot exist without asking the fleet', async () => {
    const res = await request(h.app)
      .get(`/v1/runs/${'x'.repeat(300)}`)
      .set(bearer(acme()));
    expect(res.status).toBe(404);
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../../../src/api/events/signature';
import { syncTenantsToFleet } from '../../../src/api/tenant-sync';
import { bearer, synthetic, useHarness } from './harness';

describe('tenant disable: POST /v1/admin/tenants/:id/disable and /enable', () => {
  const h = useHarness({ tenants: ['other'] });

  const runStatus = async (key: string, runId: string) =>
    ((await request(h.app).get(`/v1/runs/${runId}`).set(bearer(key)).expect(200)).body as { status: string })
      .status;

  it('refuses the keys and signed deliveries of a disabled tenant with 403 tenant_disabled; enable restores them', async () => {
    const key = await h.tenant('acme');
    const s = await request(h.app)
      .post('/v1/webhook-secrets')
      .set(bearer(key))
      .send({ source: 'shop' })
      .expect(201);
    const secret = (s.body as { secret: string }).secret;

    const off = await request(h.app).post('/v1/admin/tenants/acme/disable').set(h.admin()).expect(200);
    expect(off.body).toMatchObject({ tenant: 'acme', disabled: true });
    for (const res of [
      await h.submit(key),
      await request(h.app).get('/v1/runs').set(bearer(key)),
      await request(h.app).get('/v1/tenants/me').set(bearer(key)),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: { code: 'tenant_disabled' } });
    }
    const raw = JSON.stringify({
      specversion: '1.0',
      id: 'e1',
      source: 'shop',
      type: 'order.created',
      data: {},
    });
    const delivery = (sig: string) =>
      request(h.app)
        .post('/v1/events?tenant=acme')
        .set('content-type', 'application/json')
        .set('Fairway-Signature', sig)
        .send(raw);
    const signed = await delivery(signPayload(secret, raw, Math.floor(h.clock.now / 1000)));
    expect(signed.status).toBe(403);
    expect(signed.body).toMatchObject({ error: { code: 'tenant_disabled' } });
    // A forged delivery learns nothing about the tenant's state: 401, as for any bad signature.
    expect((await delivery(signPayload('wrong', raw, Math.floor(h.clock.now / 1000)))).status).toBe(401);
    // Other tenants and the admin are unaffected; the admin sees the flag.
    await h.submit(h.keys.other!).expect(202);
    const listed = await request(h.app).get('/v1/admin/tenants').set(h.admin()).expect(200);
    expect(listed.body.tenants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tenant: 'acme', disabled: true }),
        expect.objectContaining({ tenant: 'other', disabled: false }),
      ]),
    );

    const on = await request(h.app).post('/v1/admin/tenants/acme/enable').set(h.admin()).expect(200);
    expect(on.body).toMatchObject({ tenant: 'acme', disabled: false });
    await h.submit(key).expect(202);
    expect((await delivery(signPayload(secret, raw, Math.floor(h.clock.now / 1000)))).status).toBe(202);
  });

  it('keeps a disabled tenant’s queued runs queued, across a settings change and a scheduler resync, until enabled', async () => {
    const key = await h.tenant('acme', { maxInFlight: 1 });
    const first = (await h.submit(key).expect(202)).body as { runId: string };
    const second = (await h.submit(key, synthetic(), { 'Idempotency-Key': 'k2' }).expect(202)).body as {
      runId: string;
    };
    h.fleet.tick();
    expect(await runStatus(key, first.runId)).toBe('running');
    expect(await runStatus(key, second.runId)).toBe('queued');

    await request(h.app).post('/v1/admin/tenants/acme/disable').set(h.admin()).expect(200);
    // The admin raises its concurrency while it is disabled: still nothing is admitted.
    const put = await request(h.app)
      .put('/v1/admin/tenants/acme')
      .set(h.admin())
      .send({ maxInFlight: 5 })
      .expect(200);
    expect(put.body).toMatchObject({ disabled: true, settings: { maxInFlight: 5 } });
    // The scheduler hears the tenant's stored settings again (as after it lost them): still held.
    await syncTenantsToFleet(h.store, h.fleet);
    h.fleet.complete(first.runId);
    h.fleet.tick();
    h.clock.now += 60_000;
    h.fleet.tick();

    await request(h.app).post('/v1/admin/tenants/acme/enable').set(h.admin()).expect(200);
    expect(await runStatus(key, first.runId)).toBe('completed');
    expect(await runStatus(key, second.runId)).toBe('queued');
    h.fleet.tick();
    expect(await runStatus(key, second.runId)).toBe('running');
  });

  it('answers 404 for an unknown tenant and 403 for a tenant key', async () => {
    await request(h.app).post('/v1/admin/tenants/nobody/disable').set(h.admin()).expect(404);
    await request(h.app).post('/v1/admin/tenants/other/disable').set(bearer(h.keys.other!)).expect(403);
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { bearer, synthetic, useHarness } from './harness';

describe('authentication and authorisation', () => {
  const h = useHarness();

  it('answers 401 unauthorized without a key, with a malformed header, and with an unknown key', async () => {
    for (const auth of [undefined, 'Basic abc', 'Bearer', 'Bearer fw_not-a-real-key']) {
      const req = request(h.app).get('/v1/runs');
      const res = auth === undefined ? await req : await req.set('Authorization', auth);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.body.error.message).toMatch(/\w+ \w+/);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('forbids tenant keys on /v1/admin/*', async () => {
    const key = await h.tenant('acme');
    for (const [method, path] of [
      ['get', '/v1/admin/tenants'],
      ['get', '/v1/admin/scheduler'],
      ['post', '/v1/admin/drain'],
      ['put', '/v1/admin/tenants/other'],
    ] as const) {
      const res = await request(h.app)[method](path).set(bearer(key)).send({});
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect(h.fleet.status().intake).toBe('open');
    expect(await h.store.tenants.get('other')).toBeUndefined();
  });

  it('forbids the admin token from acting as a tenant, saying why', async () => {
    const run = await request(h.app).post('/v1/runs').set(h.admin()).send(synthetic());
    expect(run.status).toBe(403);
    expect(run.body.error.message).toMatch(/admin token cannot submit runs/);
    const me = await request(h.app).get('/v1/tenants/me').set(h.admin());
    expect(me.status).toBe(403);
    const batch = await request(h.app)
      .post('/v1/batches')
      .set(h.admin())
      .send({ agent: 'synthetic', items: [{ steps: 1 }] });
    expect(batch.status).toBe(403);
    expect(h.fleet.submitCalls).toHaveLength(0);
  });

  it('answers unknown routes with a JSON 404', async () => {
    const open = await request(h.app).get('/nope');
    expect(open.status).toBe(404);
    expect(open.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    const key = await h.tenant('acme');
    const v1 = await request(h.app).delete('/v1/no-such-route').set(bearer(key));
    expect(v1.status).toBe(404);
    expect(v1.body.error.code).toBe('not_found');
    // A known path with a method it does not serve: 405 (contract-fuzz.test.ts).
    expect((await request(h.app).delete('/v1/runs').set(bearer(key))).status).toBe(405);
  });
});

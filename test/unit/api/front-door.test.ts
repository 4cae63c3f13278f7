import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import request from 'supertest';
import { loadConfig } from '../../../src/config';
import { createApp } from '../../../src/api/app';
import { openStore } from '../../../src/api/stores/store';
import { FakeFleet } from './fake-fleet';
import { bearer, makeHarness, type Harness } from './harness';

describe('issue 11: the front door', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  describe('row 9: security headers', () => {
    it('sends nosniff everywhere and no-store on authenticated answers and on the one carrying an apiKey', async () => {
      const created = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({});
      expect(created.status).toBe(201);
      expect(created.body.apiKey).toMatch(/^fw_/);
      expect(created.headers['cache-control']).toBe('no-store');
      expect(created.headers['x-content-type-options']).toBe('nosniff');
      const rotated = await request(h.app).post('/v1/admin/tenants/acme/keys').set(h.admin());
      expect(rotated.headers['cache-control']).toBe('no-store');
      const unauth = await request(h.app).get('/v1/runs');
      expect(unauth.status).toBe(401);
      expect(unauth.headers['x-content-type-options']).toBe('nosniff');
      const health = await request(h.app).get('/healthz');
      expect(health.headers['x-content-type-options']).toBe('nosniff');
      const missing = await request(h.app).get('/nope');
      expect(missing.headers['x-content-type-options']).toBe('nosniff');
    });
  });

  describe('row 4: malformed percent-encoding', () => {
    it('answers 400 in the JSON error shape and logs one warn line without a stack', async () => {
      const lines: Record<string, unknown>[] = [];
      const log = pino({ level: 'debug' }, { write: (l: string) => lines.push(JSON.parse(l)) });
      const h2 = makeHarness({ log });
      try {
        const key = await h2.tenant('acme');
        for (const path of ['/v1/runs/%', '/v1/runs/%E0%A4%A', '/v1/batches/%zz', '/v1/admin/tenants/%']) {
          const auth = path.startsWith('/v1/admin') ? h2.admin() : bearer(key);
          const res = await request(h2.app).get(path).set(auth);
          expect(res.status, path).toBe(400);
          expect(res.body.error.code).toBe('invalid_request');
        }
        expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
        const warns = lines.filter((l) => l.level === 40);
        expect(warns.length).toBe(4);
        expect(JSON.stringify(warns)).not.toMatch(/stack/);
      } finally {
        h2.close();
      }
    });
  });

  describe('row 8: bodies that are not JSON', () => {
    it('answers 415 to text/plain on drain, tenant PUT, runs and batches, and applies nothing', async () => {
      const key = await h.tenant('acme');
      const cases = [
        ['post', '/v1/admin/drain', h.admin()],
        ['put', '/v1/admin/tenants/acme', h.admin()],
        ['put', '/v1/admin/tenants/newco', h.admin()],
        ['patch', '/v1/admin/scheduler', h.admin()],
        ['post', '/v1/runs', bearer(key)],
        ['post', '/v1/batches', bearer(key)],
      ] as const;
      for (const [method, path, auth] of cases) {
        const agent = request(h.app);
        const res = await agent[method](path)
          .set(auth)
          .set('Content-Type', 'text/plain')
          .send('{"maxQueued": 5}');
        expect(res.status, `${method} ${path}`).toBe(415);
        expect(res.body.error.code).toBe('unsupported_media_type');
      }
      expect(h.fleet.intake).toBe('open');
      expect(h.store.tenants.get('newco')).toBeUndefined();
      const form = await request(h.app)
        .post('/v1/runs')
        .set(bearer(key))
        .type('form')
        .send({ agent: 'synthetic' });
      expect(form.status).toBe(415);
      // A body-less POST stays fine.
      expect((await request(h.app).post('/v1/admin/drain').set(h.admin())).status).toBe(200);
    });
  });

  describe('row 11: admin token length', () => {
    it('refuses a configuration whose ADMIN_TOKEN is shorter than 32 characters', () => {
      expect(() => loadConfig({ ADMIN_TOKEN: 'x' })).toThrow(/ADMIN_TOKEN: must be at least 32 characters/);
      expect(loadConfig({ ADMIN_TOKEN: 'a'.repeat(32) }).adminToken).toBe('a'.repeat(32));
      expect(loadConfig({ ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
    });

    it('createApp refuses a short admin token', () => {
      const store = openStore(':memory:');
      expect(() =>
        createApp({
          fleet: new FakeFleet(),
          db: store,
          adminToken: 'short',
          tenantDefaults: { maxQueued: 1, maxInFlight: 1, ratePerSecond: 1 },
          log: pino({ level: 'silent' }),
        }),
      ).toThrow(/at least 32/);
      store.close();
    });
  });
});

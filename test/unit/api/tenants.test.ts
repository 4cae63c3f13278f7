import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { syncTenantsToFleet } from '../../../src/api/tenant-sync';
import { bearer, synthetic, useHarness } from './harness';

describe('admin tenants', () => {
  const h = useHarness();

  it('creates a tenant with defaults, shows its key once, and tells the scheduler', async () => {
    const res = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({ weight: 2 });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe('/v1/admin/tenants/acme');
    expect(res.body.apiKey).toMatch(/^fw_[A-Za-z0-9_-]{43}$/);
    const settings = {
      weight: 2,
      maxQueued: 100,
      maxInFlight: 10,
      budget: { tokens: null, period: 'none' },
      onBudgetExhausted: 'fail',
    };
    expect(res.body).toMatchObject({ tenant: 'acme', settings });
    expect(h.fleet.upsertCalls).toEqual([{ tenant: 'acme', settings }]);

    const update = await request(h.app)
      .put('/v1/admin/tenants/acme')
      .set(h.admin())
      .send({ maxInFlight: 3, budget: { tokens: 5000, period: 'day' } });
    expect(update.status).toBe(200);
    expect(update.body.apiKey).toBeUndefined();
    expect(update.body.settings).toEqual({
      ...settings,
      maxInFlight: 3,
      budget: { tokens: 5000, period: 'day' },
    });
    // The core keeps what it schedules by (onBudgetExhausted is the runs' to read, not the core's).
    expect(update.body.settings).toMatchObject(h.fleet.tenantSettings('acme')!);

    const park = await request(h.app)
      .put('/v1/admin/tenants/acme')
      .set(h.admin())
      .send({ onBudgetExhausted: 'park' });
    expect(park.status).toBe(200);
    expect(park.body.settings).toEqual({ ...update.body.settings, onBudgetExhausted: 'park' });
    const bad = await request(h.app)
      .put('/v1/admin/tenants/acme')
      .set(h.admin())
      .send({ onBudgetExhausted: 'wait' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });

  it('keeps only a hash of the key, and never lists keys', async () => {
    const key = await h.tenant('acme');
    const files = readdirSync(join(h.dir, 'nested'));
    for (const f of files) expect(readFileSync(join(h.dir, 'nested', f)).includes(key)).toBe(false);
    const list = await request(h.app).get('/v1/admin/tenants').set(h.admin());
    expect(list.status).toBe(200);
    expect(list.body.tenants).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toMatch(/apiKey|key_hash|fw_/);
    expect((await h.store.listTenants()).map((t) => t.tenant)).toEqual(['acme']);
  });

  it('rotates a key: the old one stops working, the new one works', async () => {
    const oldKey = await h.tenant('acme');
    const rotated = await request(h.app).post('/v1/admin/tenants/acme/keys').set(h.admin());
    expect(rotated.status).toBe(201);
    const newKey = rotated.body.apiKey as string;
    expect(newKey).not.toBe(oldKey);
    expect((await request(h.app).get('/v1/tenants/me').set(bearer(oldKey))).status).toBe(401);
    expect((await request(h.app).get('/v1/tenants/me').set(bearer(newKey))).status).toBe(200);
    expect((await request(h.app).post('/v1/admin/tenants/ghost/keys').set(h.admin())).status).toBe(404);
  });

  it('rejects bad ids and bodies with details, and changes nothing', async () => {
    const badId = await request(h.app).put('/v1/admin/tenants/Not_Valid').set(h.admin()).send({});
    expect(badId.status).toBe(400);
    expect(badId.body.error.details).toEqual([{ path: 'tenantId', message: expect.any(String) }]);
    const longId = await request(h.app)
      .put(`/v1/admin/tenants/${'a'.repeat(65)}`)
      .set(h.admin())
      .send({});
    expect(longId.status).toBe(400);

    const bad = await request(h.app)
      .put('/v1/admin/tenants/acme')
      .set(h.admin())
      .send({ weight: 0, maxQueued: 1.5, budget: { tokens: -1, period: 'week' }, colour: 'red' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    const paths = (bad.body.error.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(['budget.period', 'budget.tokens', 'colour', 'maxQueued', 'weight']);
    expect(h.fleet.upsertCalls).toHaveLength(0);
    expect(await h.store.listTenants()).toHaveLength(0);
  });

  it('sets key weights, keeps them across updates, re-syncs them, and clears them', async () => {
    const put = (body: object) => request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send(body);
    const created = await put({ keyWeights: { 'user-42': 3, 'org:7/bob@x.io': 0.5 } });
    expect(created.status).toBe(201);
    expect(created.body.settings.keyWeights).toEqual({ 'user-42': 3, 'org:7/bob@x.io': 0.5 });
    // The core divides the tenant's share between its keys by these weights.
    expect(h.fleet.tenantSettings('acme')?.keyWeights).toEqual({ 'user-42': 3, 'org:7/bob@x.io': 0.5 });
    // Another field alone leaves them as they were; they survive a scheduler that forgot the tenant.
    expect((await put({ weight: 2 })).body.settings.keyWeights).toEqual({
      'user-42': 3,
      'org:7/bob@x.io': 0.5,
    });
    h.fleet.resetScheduler();
    await syncTenantsToFleet(h.store, h.fleet);
    expect(h.fleet.tenantSettings('acme')?.keyWeights).toEqual({ 'user-42': 3, 'org:7/bob@x.io': 0.5 });
    // A new map replaces the old one as a whole; null clears it.
    expect((await put({ keyWeights: { 'user-7': 2 } })).body.settings.keyWeights).toEqual({ 'user-7': 2 });
    const cleared = await put({ keyWeights: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.settings.keyWeights).toBeUndefined();
    expect(h.fleet.tenantSettings('acme')?.keyWeights).toBeUndefined();
  });

  it('refuses key weights out of form with a 400 naming each, and changes nothing', async () => {
    await h.tenant('acme');
    const calls = h.fleet.upsertCalls.length;
    const put = (keyWeights: unknown) =>
      request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({ keyWeights });
    const bad = await put({ 'user 1': 1, 'user#2': 1, [`k${'x'.repeat(64)}`]: 1, ok: 0, neg: -2, big: 1001 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    const paths = (bad.body.error.details as { path: string }[]).map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['keyWeights.ok', 'keyWeights.neg', 'keyWeights.big']));
    expect(paths.filter((p) => p.startsWith('keyWeights')).length).toBeGreaterThanOrEqual(6);
    const many = await put(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`u${i}`, 1])));
    expect(many.status).toBe(400);
    expect(many.body.error.message + JSON.stringify(many.body.error.details)).toMatch(/64 key weights/);
    expect((await put([1, 2])).status).toBe(400);
    expect(h.fleet.upsertCalls.length).toBe(calls);
    expect((await h.store.tenants.get('acme'))?.settings.keyWeights).toBeUndefined();
  });

  it('stores nothing when the scheduler cannot be told (no key is lost)', async () => {
    h.fleet.down = true;
    const res = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({});
    expect(res.status).toBe(500);
    expect(res.body.error).toEqual({ code: 'internal', message: expect.any(String) });
    expect(res.body.error.message).not.toMatch(/unreachable/);
    expect(await h.store.listTenants()).toHaveLength(0);
  });

  it('reads one tenant and its ledger', async () => {
    const key = await h.tenant('acme');
    await h.submit(key, synthetic(3));
    h.fleet.tick(); // the ledger reserves at admission
    const one = await request(h.app).get('/v1/admin/tenants/acme').set(h.admin());
    expect(one.body).toMatchObject({ tenant: 'acme', createdAt: '2025-06-01T12:00:00.000Z' });
    const ledger = await request(h.app).get('/v1/admin/tenants/acme/ledger?limit=5').set(h.admin());
    expect(ledger.status).toBe(200);
    expect(ledger.body.entries).toEqual([expect.objectContaining({ kind: 'reserve', tokens: 300 })]);
    expect((await request(h.app).get('/v1/admin/tenants/acme/ledger?limit=0').set(h.admin())).status).toBe(
      400,
    );
    expect((await request(h.app).get('/v1/admin/tenants/ghost/ledger').set(h.admin())).status).toBe(404);
  });
});

describe('syncTenantsToFleet', () => {
  const h = useHarness();

  it('re-sends every stored tenant to a scheduler that forgot them', async () => {
    await h.tenant('acme', { weight: 3 });
    await h.tenant('beta');
    h.fleet.resetScheduler();
    expect(h.fleet.tenantSettings('acme')).toBeUndefined();
    expect(await syncTenantsToFleet(h.store, h.fleet)).toBe(2);
    expect(h.fleet.tenantSettings('acme')?.weight).toBe(3);
    expect(h.fleet.tenantSettings('beta')).toBeDefined();
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { bearer, useHarness } from './harness';

const RUN = { agent: 'synthetic', input: { steps: 2 } };

describe('/v1/schedules', () => {
  const h = useHarness({ tenants: ['acme', 'globex'] });
  const put = (key: string, name: string, body: unknown) =>
    request(h.app)
      .put(`/v1/schedules/${name}`)
      .set(bearer(key))
      .send(body as object);
  const get = (key: string, name: string) => request(h.app).get(`/v1/schedules/${name}`).set(bearer(key));

  it('creates (201) and replaces (200) a schedule, validated like a run', async () => {
    const created = await put(h.keys.acme!, 'nightly', { ...RUN, cron: '0 3 * * *' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/v1/schedules/nightly');
    expect(created.body).toMatchObject({
      name: 'nightly',
      tenant: 'acme',
      agent: 'synthetic',
      priority: 'standard',
      cron: '0 3 * * *',
      intervalSeconds: null,
      overlap: 'skip',
      paused: null,
    });
    // The agent's defaults apply and its estimate is the floor, as for POST /v1/runs.
    expect(created.body.estimatedTokens).toBeGreaterThan(0);
    const replaced = await put(h.keys.acme!, 'nightly', {
      ...RUN,
      intervalSeconds: 60,
      overlap: 'buffer_one',
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ cron: null, intervalSeconds: 60, overlap: 'buffer_one' });
    expect(created.body.fairnessKey).toBeNull();
    // Its runs may name their end user, as on POST /v1/runs; a key out of form is a 400.
    const keyed = await put(h.keys.acme!, 'nightly', { ...RUN, intervalSeconds: 60, fairnessKey: 'user-42' });
    expect(keyed.body.fairnessKey).toBe('user-42');
    const badKey = await put(h.keys.acme!, 'nightly', { ...RUN, intervalSeconds: 60, fairnessKey: 'a b' });
    expect(badKey.status).toBe(400);
    expect(badKey.body.error.details[0].path).toBe('fairnessKey');
    expect((await get(h.keys.acme!, 'nightly')).body.intervalSeconds).toBe(60);
  });

  it('answers 400 with field paths, and 404 unknown_agent as POST /v1/runs does', async () => {
    const both = await put(h.keys.acme!, 'x', { ...RUN, cron: '* * * * *', intervalSeconds: 5 });
    expect(both.status).toBe(400);
    expect(both.body.error.details).toContainEqual(expect.objectContaining({ path: 'cron' }));
    const neither = await put(h.keys.acme!, 'x', RUN);
    expect(neither.status).toBe(400);
    const bad = await put(h.keys.acme!, 'x', {
      agent: 'synthetic',
      input: { steps: 'many' },
      intervalSeconds: 0,
      overlap: 'sometimes',
      extra: 1,
    });
    expect(bad.status).toBe(400);
    const paths = (bad.body.error.details as { path: string }[]).map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['input.steps', 'intervalSeconds', 'overlap', 'extra']));
    const cron = await put(h.keys.acme!, 'x', { ...RUN, cron: 'every night' });
    expect(cron.status).toBe(400);
    const name = await put(h.keys.acme!, 'a:b', { ...RUN, intervalSeconds: 5 });
    expect(name.status).toBe(400);
    expect(name.body.error.details[0].path).toBe('name');
    const agent = await put(h.keys.acme!, 'x', { agent: 'nobody', input: {}, intervalSeconds: 60 });
    expect(agent.status).toBe(404);
    expect(agent.body.error.code).toBe('unknown_agent');
  });

  it('fires no more often than SCHEDULE_MIN_INTERVAL_SECONDS (60 by default): no interval below, no seconds field', async () => {
    const fast = await put(h.keys.acme!, 'fast', { ...RUN, intervalSeconds: 59 });
    expect(fast.status).toBe(400);
    expect(fast.body.error.details).toEqual([expect.objectContaining({ path: 'intervalSeconds' })]);
    const seconds = await put(h.keys.acme!, 'fast', { ...RUN, cron: '* * * * * *' });
    expect(seconds.status).toBe(400);
    expect(seconds.body.error.details).toEqual([expect.objectContaining({ path: 'cron' })]);
    expect((await get(h.keys.acme!, 'fast')).status).toBe(404);
    expect((await put(h.keys.acme!, 'fast', { ...RUN, cron: '@hourly' })).status).toBe(201);
  });

  it("keeps each tenant's schedules its own; the admin reads them by ?tenant= and writes none", async () => {
    await put(h.keys.acme!, 'nightly', { ...RUN, intervalSeconds: 60 });
    expect((await get(h.keys.globex!, 'nightly')).status).toBe(404);
    const theirs = await request(h.app).get('/v1/schedules').set(bearer(h.keys.globex!));
    expect(theirs.body.items).toEqual([]);
    const all = await request(h.app).get('/v1/schedules').set(h.admin());
    expect(all.body.items.map((i: { tenant: string }) => i.tenant)).toEqual(['acme']);
    expect((await request(h.app).get('/v1/schedules/nightly?tenant=acme').set(h.admin())).status).toBe(200);
    expect((await request(h.app).get('/v1/schedules/nightly').set(h.admin())).status).toBe(400);
    const adminPut = await request(h.app)
      .put('/v1/schedules/nightly')
      .set(h.admin())
      .send({ ...RUN, intervalSeconds: 60 });
    expect(adminPut.status).toBe(403);
    expect((await request(h.app).delete('/v1/schedules/nightly').set(bearer(h.keys.globex!))).status).toBe(
      404,
    );
    expect((await request(h.app).delete('/v1/schedules/nightly').set(bearer(h.keys.acme!))).status).toBe(204);
    expect((await get(h.keys.acme!, 'nightly')).status).toBe(404);
  });

  it('triggers; a drain pauses every running schedule and resume unpauses only those', async () => {
    await put(h.keys.acme!, 'running', { ...RUN, intervalSeconds: 60 });
    await put(h.keys.acme!, 'mine', { ...RUN, intervalSeconds: 60, paused: true });
    const trig = await request(h.app).post('/v1/schedules/running/trigger').set(bearer(h.keys.acme!));
    expect(trig.status).toBe(202);
    expect((await get(h.keys.acme!, 'running')).body.actionsTaken).toBe(1);
    expect((await request(h.app).post('/v1/schedules/nope/trigger').set(bearer(h.keys.acme!))).status).toBe(
      404,
    );

    expect((await request(h.app).post('/v1/admin/drain').set(h.admin())).status).toBe(200);
    expect((await get(h.keys.acme!, 'running')).body.paused).toBe('drain');
    expect((await get(h.keys.acme!, 'mine')).body.paused).toBe('tenant');
    // Written while drained: it starts paused by the drain; fired by hand: refused as the door refuses.
    expect((await put(h.keys.acme!, 'late', { ...RUN, intervalSeconds: 60 })).body.paused).toBe('drain');
    const refused = await request(h.app).post('/v1/schedules/running/trigger').set(bearer(h.keys.acme!));
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('draining');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    expect((await request(h.app).post('/v1/admin/resume').set(h.admin())).status).toBe(200);
    expect((await get(h.keys.acme!, 'running')).body.paused).toBeNull();
    expect((await get(h.keys.acme!, 'late')).body.paused).toBeNull();
    expect((await get(h.keys.acme!, 'mine')).body.paused).toBe('tenant');
  });

  it('goes with its tenant when the tenant is deleted', async () => {
    await put(h.keys.globex!, 'nightly', { ...RUN, intervalSeconds: 60 });
    expect((await request(h.app).post('/v1/admin/tenants/globex/disable').set(h.admin())).status).toBe(200);
    expect((await request(h.app).delete('/v1/admin/tenants/globex').set(h.admin())).status).toBe(204);
    const left = await request(h.app).get('/v1/schedules?tenant=globex').set(h.admin());
    expect(left.body.items).toEqual([]);
  });
});

import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, makeHarness, type Harness } from './harness';

/** Issue 44, item 2: a deleted tenant's id does not hand its webhooks or runs to a new tenant. */

describe('deleting a tenant and creating its id again', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  const remove = async (tenant: string) => {
    await request(h.app).post(`/v1/admin/tenants/${tenant}/disable`).set(h.admin()).expect(200);
    await request(h.app).delete(`/v1/admin/tenants/${tenant}`).set(h.admin()).expect(204);
  };

  it('the new tenant has none of the old webhook endpoints or deliveries', async () => {
    const key = await h.tenant('acme');
    const made = await request(h.app)
      .post('/v1/webhooks')
      .set(bearer(key))
      .send({ url: 'https://old-owner.example.com/in', events: ['run.completed'] })
      .expect(201);
    await remove('acme');
    const again = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({}).expect(201);
    const newKey = (again.body as { apiKey: string }).apiKey;
    expect(newKey).not.toBe(key);
    expect(again.body).toMatchObject({ disabled: false, approverKey: false });
    const list = await request(h.app).get('/v1/webhooks').set(bearer(newKey)).expect(200);
    expect(JSON.stringify(list.body)).not.toMatch(/old-owner/);
    await request(h.app)
      .get(`/v1/webhooks/${(made.body as { id: string }).id}/deliveries`)
      .set(bearer(newKey))
      .expect(404);
  });

  it("is refused (409) while the old tenant's runs are still listed in Temporal", async () => {
    const key = await h.tenant('acme');
    const run = await h.submit(key, { agent: 'synthetic', input: { steps: 1 } });
    expect(run.status).toBe(202);
    h.fleet.tick();
    h.fleet.complete((run.body as { runId: string }).runId);
    await remove('acme');
    const again = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send({});
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    expect(again.body.error.message).toMatch(/runs/);
    expect(again.body.apiKey).toBeUndefined();
    // Nothing was created: the id stays unknown.
    await request(h.app).get('/v1/admin/tenants/acme').set(h.admin()).expect(404);
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EVENT_CAPS } from '../../../src/config';
import { bearer, useHarness } from './harness';

const body = { url: 'https://hooks.example.com/in', events: ['run.completed', 'run.failed'] };

describe('webhook endpoints (routes)', () => {
  const h = useHarness({
    tenants: ['acme', 'other'],
    eventCaps: { ...DEFAULT_EVENT_CAPS, maxWebhookEndpoints: 2 },
  });

  it('registers an endpoint and shows its secret once', async () => {
    const made = await request(h.app).post('/v1/webhooks').set(bearer(h.keys.acme!)).send(body).expect(201);
    expect(made.body).toMatchObject({ id: expect.stringMatching(/^wh_/), ...body, description: '' });
    expect(made.body.secret).toMatch(/^whsec_/);
    const list = await request(h.app).get('/v1/webhooks').set(bearer(h.keys.acme!)).expect(200);
    expect(list.body.items).toEqual([
      { ...body, id: made.body.id, description: '', createdAt: expect.any(String) },
    ]);
    const one = await request(h.app)
      .get(`/v1/webhooks/${made.body.id}`)
      .set(bearer(h.keys.acme!))
      .expect(200);
    expect(one.body.secret).toBeUndefined();
    const deliveries = await request(h.app)
      .get(`/v1/webhooks/${made.body.id}/deliveries`)
      .set(bearer(h.keys.acme!))
      .expect(200);
    expect(deliveries.body).toEqual({ items: [] });
    // Another tenant cannot see or delete it.
    await request(h.app).get(`/v1/webhooks/${made.body.id}`).set(bearer(h.keys.other!)).expect(404);
    await request(h.app).delete(`/v1/webhooks/${made.body.id}`).set(bearer(h.keys.other!)).expect(404);
    await request(h.app).delete(`/v1/webhooks/${made.body.id}`).set(bearer(h.keys.acme!)).expect(204);
    await request(h.app).get(`/v1/webhooks/${made.body.id}`).set(bearer(h.keys.acme!)).expect(404);
  });

  it('refuses bad input with 400, the admin token with 403, one past the cap with 409', async () => {
    const post = (b: unknown, key = h.keys.acme!) =>
      request(h.app)
        .post('/v1/webhooks')
        .set(bearer(key))
        .send(b as object);
    for (const [b, path] of [
      [{ ...body, url: 'ftp://hooks.example.com/' }, 'url'],
      [{ ...body, url: 'http://127.0.0.1:8080/' }, 'url'],
      [{ ...body, url: 'http://169.254.169.254/latest' }, 'url'],
      [{ ...body, events: ['run.started'] }, 'events.0'],
      [{ ...body, events: [] }, 'events'],
      [{ url: body.url }, 'events'],
      [{ ...body, extra: 1 }, 'extra'],
    ] as const) {
      const r = await post(b);
      expect(r.status, JSON.stringify(b)).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
      expect(r.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await post(body, 'x'.repeat(40))).status).toBe(401);
    expect((await request(h.app).post('/v1/webhooks').set(h.admin()).send(body)).status).toBe(403);
    await request(h.app).get('/v1/webhooks/not-an-id').set(bearer(h.keys.acme!)).expect(400);
    await post(body).expect(201);
    await post(body).expect(201);
    const over = await post(body);
    expect(over.status).toBe(409);
    expect(over.body.error.message).toMatch(/2 webhook endpoints/);
  });
});

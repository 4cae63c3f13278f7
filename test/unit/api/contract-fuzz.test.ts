import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { TriggerPutSchema } from '../../../src/api/intake/event-schemas';
import { openApiDocument } from '../../../src/api/openapi/document';
import { withLimitedServer } from './slow-client';
import { bearer, makeHarness, useHarness } from './harness';

/** What `npm run fuzz` (schemathesis) found against the served document, each pinned by a test. */

type Schema = Record<string, unknown> & { properties?: Record<string, Schema> };
interface Doc {
  components: { schemas: Record<string, Schema> };
  paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
}
const doc = () => openApiDocument() as unknown as Doc;

describe('contract findings of the fuzzer', () => {
  const h = useHarness({ tenants: ['acme'] });

  it('answers an undeclared TRACE with 405 and the Allow header RFC 9110 requires', async () => {
    const one = await request(h.app).trace('/v1/runs/run-x/cancel');
    expect(one.status).toBe(405);
    expect(one.headers.allow).toBe('POST');
    const runs = await request(h.app).trace('/v1/runs');
    expect(runs.headers.allow?.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    const nowhere = await request(h.app).trace('/no/such/path');
    expect(nowhere.status).toBe(405);
    expect(nowhere.headers.allow).toBe('');
  });

  it('answers a method a known path does not serve with 405 and Allow, and OPTIONS with every method', async () => {
    const del = await request(h.app)
      .delete('/v1/tenants/me')
      .set(bearer(h.keys.acme ?? ''));
    expect(del.status).toBe(405);
    expect(del.body.error.code).toBe('method_not_allowed');
    expect(del.headers.allow).toBe('GET, HEAD');
    const unknown = await request(h.app)
      .delete('/v1/nothing-here')
      .set(bearer(h.keys.acme ?? ''));
    expect(unknown.status).toBe(404);
    // The ingress router serves POST /v1/events and another GET: OPTIONS names both.
    const options = await request(h.app).options('/v1/events');
    expect(options.status).toBe(204);
    expect(options.headers.allow?.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
  });

  it('says in the document that a scheduler patch and its floors need at least one field', async () => {
    const patch = doc().components.schemas.SchedulerPatch;
    expect(patch?.minProperties).toBe(1);
    expect(patch?.properties?.floors?.minProperties).toBe(1);
    const empty = await request(h.app)
      .patch('/v1/admin/scheduler')
      .set(h.admin())
      .send({ concurrency: 2, floors: {} });
    expect(empty.status).toBe(400);
    const ok = await request(h.app)
      .patch('/v1/admin/scheduler')
      .set(h.admin())
      .send({ concurrency: 2, floors: { batch: 0.1 } });
    expect(ok.status).toBe(200);
  });

  it("describes a trigger filter's keys as the API checks them", () => {
    const put = doc().paths['/v1/triggers/{name}']?.put?.requestBody as {
      content: { 'application/json': { schema: Schema } };
    };
    const filter = put.content['application/json'].schema.properties?.filter as {
      propertyNames: { pattern: string };
      maxProperties: number;
    };
    expect(filter.maxProperties).toBe(20);
    const pattern = new RegExp(filter.propertyNames.pattern);
    for (const key of ['data.service.name', 'a', 'x_y-z.1', '\u0003\u00a5', 'a..b', '', 'a b']) {
      const parsed = TriggerPutSchema.safeParse({ eventType: 't', agent: 'synthetic', filter: { [key]: 1 } });
      expect(parsed.success, key).toBe(pattern.test(key));
    }
  });

  it('documents on every operation what any route may answer, the event routes included', () => {
    for (const [path, item] of Object.entries(doc().paths)) {
      for (const [method, op] of Object.entries(item)) {
        const codes = Object.keys(op.responses);
        for (const code of ['400', '408', '431']) expect(codes, `${method} ${path} ${code}`).toContain(code);
        if (!path.startsWith('/v1/')) continue;
        for (const code of ['401', '404', '429', '503'])
          expect(codes, `${method} ${path} ${code}`).toContain(code);
      }
    }
  });

  it('lists events with a bad outcome filter as a documented 400', async () => {
    const res = await request(h.app)
      .get('/v1/events?outcome=nope')
      .set(bearer(h.keys.acme ?? ''));
    expect(res.status).toBe(400);
    expect(doc().paths['/v1/events']?.get?.responses['400']).toBeDefined();
  });

  it('answers 408 to a body trickled past HTTP_REQUEST_TIMEOUT_MS', async () => {
    const limits = { headersTimeoutMs: 300, requestTimeoutMs: 600, maxConnections: 10 };
    await withLimitedServer(h.app, limits, async ({ client }) => {
      const slow = await client();
      slow.socket.write(
        `POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.keys.acme ?? ''}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      );
      await new Promise((r) => slow.socket.once('close', r));
      expect(slow.answer()).toMatch(/^HTTP\/1\.1 408/);
    });
  }, 30_000);

  it('limits event reads, triggers and webhook secrets like every other tenant request', async () => {
    const h2 = makeHarness({ ratePerSecond: 2 });
    try {
      const key = await h2.tenant('acme');
      for (const path of ['/v1/events', '/v1/triggers', '/v1/webhook-secrets', '/v1/events'])
        expect((await request(h2.app).get(path).set(bearer(key))).status, path).toBe(200);
      for (const path of ['/v1/events', '/v1/triggers/x', '/v1/webhook-secrets']) {
        const res = await request(h2.app).get(path).set(bearer(key));
        expect(res.status, path).toBe(429);
        expect(res.headers['retry-after']).toBeDefined();
      }
    } finally {
      await h2.close();
    }
  });
});

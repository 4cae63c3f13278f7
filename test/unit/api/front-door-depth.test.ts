import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../src/api/middleware/json-depth';
import { signPayload } from '../../../src/api/events/signature';
import { bearer, makeHarness, type Harness } from './harness';
import { withLimitedServer } from './slow-client';
import { DEFAULT_HTTP_LIMITS } from '../../../src/api/server';

/** Issue 30, findings 6, 7 and 9: deep JSON, the console's asset names, and reading before authenticating. */

/** `depth` nested arrays around a number, as text (the value never exists as an object here). */
const nestedText = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
/** `depth` nested objects `{"a":{"a":...}}` as a value. */
const nestedObject = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

const SOURCE = 'https://alerts.example.com';

/** A fresh harness per test with tenant acme (its key) and a webhook secret for SOURCE. */
function useAcmeWithSecret(): { h: Harness; key: string; secret: string } {
  const t = {} as { h: Harness; key: string; secret: string };
  beforeEach(async () => {
    t.h = makeHarness();
    t.key = await t.h.tenant('acme');
    const s = await request(t.h.app).post('/v1/webhook-secrets').set(bearer(t.key)).send({ source: SOURCE });
    t.secret = (s.body as { secret: string }).secret;
  });
  afterEach(() => t.h.close());
  return t;
}

describe('issue 30: deep JSON is refused at the door (finding 6)', () => {
  const a = useAcmeWithSecret();

  const deep = nestedText(6000);
  const cases: [string, string, string][] = [
    ['POST /v1/runs input', '/v1/runs', `{"agent":"synthetic","input":${deep}}`],
    ['POST /v1/batches items', '/v1/batches', `{"items":[{"agent":"synthetic","input":${deep}}]}`],
    [
      'POST /v1/events data',
      '/v1/events',
      `{"specversion":"1.0","id":"e1","type":"t","source":"${SOURCE}","data":${deep}}`,
    ],
    ['PUT /v1/triggers input', '/v1/triggers/deep', `{"eventType":"t","agent":"synthetic","input":${deep}}`],
  ];
  for (const [name, path, body] of cases) {
    it(`${name}: 6000 levels is 400 invalid_request, not 500`, async () => {
      const agent = request(a.h.app);
      const res = await (path.startsWith('/v1/triggers') ? agent.put(path) : agent.post(path))
        .set(bearer(a.key))
        .set('content-type', 'application/json')
        .send(body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toMatch(new RegExp(`${MAX_JSON_DEPTH}`));
    });
  }

  it('a signed event nested too deep is 400 after its signature is verified', async () => {
    const raw = `{"specversion":"1.0","id":"e2","type":"t","source":"${SOURCE}","data":${deep}}`;
    const t = Math.floor(a.h.clock.now / 1000);
    const res = await request(a.h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', signPayload(a.secret, raw, t))
      .send(raw);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it(`${MAX_JSON_DEPTH} levels in all are accepted; one more is not`, async () => {
    // The body's own object is the first level, so the input may nest MAX_JSON_DEPTH - 1 more.
    const ok = await a.h.submit(a.key, { agent: 'synthetic', input: nestedObject(MAX_JSON_DEPTH - 1) });
    // The synthetic agent refuses that input's shape (400 too): what matters is that the door let it in.
    expect(JSON.stringify(ok.body)).not.toMatch(/nests deeper/);
    const over = await a.h.submit(a.key, { agent: 'synthetic', input: nestedObject(MAX_JSON_DEPTH) });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/nests deeper/);
  });
});

describe('issue 30: console asset names are own properties only (finding 7)', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])
    it(`GET /console/assets/${name} is 404`, async () => {
      const res = await request(h.app).get(`/console/assets/${name}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });

  it('a real asset is still served', async () => {
    await request(h.app).get('/console/assets/app.js').expect(200);
  });
});

describe('issue 30: POST /v1/events authenticates before it reads (finding 9)', () => {
  const a = useAcmeWithSecret();

  /** Sends only the head of a request announcing a large body, and what the server answers within 2 s. */
  async function headOnly(headers: string): Promise<string> {
    let answer = '';
    await withLimitedServer(a.h.app, DEFAULT_HTTP_LIMITS, async ({ client }) => {
      const c = await client();
      c.socket.write(
        `POST /v1/events?tenant=acme HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n${headers}\r\n`,
      );
      for (let i = 0; i < 40 && !c.answer(); i++) await new Promise((r) => setTimeout(r, 50));
      answer = c.answer();
      c.socket.destroy();
    });
    return answer;
  }

  it('no credential: 401 before the body is sent', async () => {
    expect(await headOnly('')).toMatch(/^HTTP\/1\.1 401/);
  });

  it('a wrong API key: 401 before the body is sent', async () => {
    expect(await headOnly('Authorization: Bearer fw_nope\r\n')).toMatch(/^HTTP\/1\.1 401/);
  });

  it('a malformed or stale signature, or an unknown tenant: 401 before the body is sent', async () => {
    expect(await headOnly('Fairway-Signature: nonsense\r\n')).toMatch(/^HTTP\/1\.1 401/);
    const stale = Math.floor(a.h.clock.now / 1000) - 3600;
    expect(await headOnly(`Fairway-Signature: t=${stale},v1=${'a'.repeat(64)}\r\n`)).toMatch(
      /^HTTP\/1\.1 401/,
    );
  });

  it('the signature is checked over the raw bytes before they are parsed: a forged non-JSON body is 401', async () => {
    const t = Math.floor(a.h.clock.now / 1000);
    const res = await request(a.h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', `t=${t},v1=${'b'.repeat(64)}`)
      .send('{not json');
    expect(res.status).toBe(401);
    const forgedDeep = await request(a.h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', `t=${t},v1=${'b'.repeat(64)}`)
      .send(nestedText(6000));
    expect(forgedDeep.status).toBe(401);
    // Correctly signed, it is the body's fault: 400.
    const raw = '{not json';
    const signed = await request(a.h.app)
      .post('/v1/events?tenant=acme')
      .set('content-type', 'application/json')
      .set('Fairway-Signature', signPayload(a.secret, raw, t))
      .send(raw);
    expect(signed.status).toBe(400);
  });
});

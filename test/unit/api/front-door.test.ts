import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import request from 'supertest';
import { DEFAULT_RUN_CAPS, loadConfig } from '../../../src/config';
import { assertFitsOnePayload, MAX_START_ARGUMENT_BYTES } from '../../../src/api/intake/payload-limits';
import { createApp, createApps } from '../../../src/api/app';
import { openApiDocument } from '../../../src/api/openapi/document';
import { METRICS_REFRESH_MS } from '../../../src/api/metrics/metrics-handler';
import { DEFAULT_HTTP_LIMITS } from '../../../src/api/server';
import { connect } from 'node:net';
import { withLimitedServer } from './slow-client';
import { openSqliteStore } from '../../../src/stores/api/api-store-sqlite';
import { IDEMPOTENCY_RETENTION_MS } from '../../../src/stores/idempotency/idempotency';
import fc from 'fast-check';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import type { RunSpec } from '../../../src/contract/fleet-port';
import { MemoryFleet } from './memory-fleet';

/** A fleet on the real core, for apps built outside the harness. */
const memoryFleet = () =>
  new MemoryFleet(
    Date.now,
    openSqliteEffectStore(join(mkdtempSync(join(tmpdir(), 'fairway-fd-')), 'e.sqlite')),
  );
import { BatchIdSchema, RunIdSchema, TENANT_MAXIMA } from '../../../src/api/intake/schemas';
import { quoteVisibilityString, unquoteVisibilityString } from '../../../src/contract/visibility-quote';
import type { RunView } from '../../../src/contract/fleet-port';
import { bearer, makeHarness, synthetic, type Harness } from './harness';

const someRun = (runId: string): RunView => ({
  runId,
  tenant: 'acme',
  agent: 'synthetic',
  priority: 'standard',
  status: 'running',
  createdAt: '2025-06-01T12:00:00.000Z',
  admittedAt: null,
  admissionSeq: null,
  finishedAt: null,
  usage: { tokens: 0 },
  waitingOn: null,
  result: null,
  error: null,
  toolCalls: [],
  batchId: null,
});

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
        await h2.close();
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
      expect(h.fleet.status().intake).toBe('open');
      expect(await h.store.tenants.get('newco')).toBeUndefined();
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

  describe('row 12: only run workflows are touched by run routes', () => {
    it('answers 404 for the scheduler or a batch id under /v1/runs, without asking the fleet', async () => {
      h.fleet.records.set('scheduler', {
        spec: {} as RunSpec,
        view: { ...someRun('scheduler'), tenant: '' },
        attempt: 0,
      });
      let asked = 0;
      const getRun = h.fleet.getRun.bind(h.fleet);
      const cancelRun = h.fleet.cancelRun.bind(h.fleet);
      h.fleet.getRun = (id) => (asked++, getRun(id));
      h.fleet.cancelRun = (id) => (asked++, cancelRun(id));
      for (const id of ['scheduler', 'batch-acme-0123456789abcdef', 'run-acme-xyz', 'fairway-scheduler']) {
        for (const action of ['cancel', 'approve', 'reject']) {
          const res = await request(h.app).post(`/v1/runs/${id}/${action}`).set(h.admin());
          expect(res.status, `${id} ${action}`).toBe(404);
        }
        expect((await request(h.app).get(`/v1/runs/${id}`).set(h.admin())).status).toBe(404);
      }
      expect(
        (await request(h.app).get('/v1/batches/run-acme-01234567890123456789').set(h.admin())).status,
      ).toBe(404);
      expect(asked).toBe(0);
    });

    it('still reaches a real run id and a batch item run id', () => {
      expect(RunIdSchema.safeParse('run-acme-0123456789abcdef0123').success).toBe(true);
      expect(RunIdSchema.safeParse('batch-acme-0123456789abcdef-9999').success).toBe(true);
      expect(RunIdSchema.safeParse('batch-acme-0123456789abcdef').success).toBe(false);
      expect(BatchIdSchema.safeParse('batch-acme-0123456789abcdef').success).toBe(true);
    });
  });

  describe('row 13: visibility query quoting', () => {
    it('escapes backslash and quote so the literal reads back as the value', () => {
      expect(quoteVisibilityString("a'b")).toBe("'a\\'b'");
      expect(quoteVisibilityString('a\\')).toBe("'a\\\\'");
      expect(quoteVisibilityString("\\' OR 1=1")).toBe("'\\\\\\' OR 1=1'");
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom('a', "'", '\\', ' ', '"', 'é') }), (value) => {
          const literal = quoteVisibilityString(value);
          expect(unquoteVisibilityString(literal)).toBe(value);
        }),
        { seed: 11, numRuns: 500 },
      );
    });
  });

  describe('row 14: maxima on tenant settings', () => {
    it('refuses absurd values with 400 and accepts the documented maxima', async () => {
      for (const body of [
        { maxQueued: 1e15 },
        { maxInFlight: 1e9 },
        { weight: 1e6 },
        { budget: { tokens: 1e16, period: 'day' } },
      ]) {
        const res = await request(h.app).put('/v1/admin/tenants/acme').set(h.admin()).send(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
      }
      const ok = await request(h.app)
        .put('/v1/admin/tenants/acme')
        .set(h.admin())
        .send({
          weight: TENANT_MAXIMA.weight,
          maxQueued: TENANT_MAXIMA.maxQueued,
          maxInFlight: TENANT_MAXIMA.maxInFlight,
          budget: { tokens: TENANT_MAXIMA.budgetTokens, period: 'month' },
        });
      expect(ok.status).toBe(201);
    });
  });

  describe('row 5: list cursors', () => {
    it('answers 400 to a cursor the API did not hand out, without calling the fleet', async () => {
      const key = await h.tenant('acme');
      let listed = 0;
      const listRuns = h.fleet.listRuns.bind(h.fleet);
      h.fleet.listRuns = (q) => (listed++, listRuns(q));
      for (const cursor of ['zzz', 'CgQIARAB', 'abc.def', '.', 'x'.repeat(300)]) {
        const res = await request(h.app).get('/v1/runs').query({ cursor }).set(bearer(key));
        expect(res.status, cursor).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
      expect(listed).toBe(0);
    });

    it('round-trips the cursors it hands out', async () => {
      const key = await h.tenant('acme');
      for (let i = 0; i < 5; i++) {
        expect((await request(h.app).post('/v1/runs').set(bearer(key)).send(synthetic())).status).toBe(202);
      }
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const res = await request(h.app)
          .get('/v1/runs')
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .set(bearer(key));
        expect(res.status).toBe(200);
        for (const item of res.body.items as { runId: string }[]) seen.add(item.runId);
        cursor = res.body.nextCursor ?? undefined;
      } while (cursor);
      expect(seen.size).toBe(5);
    });
  });

  describe('row 6: rate limits per item and on every tenant request', () => {
    it('charges a batch one token per item', async () => {
      const h2 = makeHarness({ ratePerSecond: 2 });
      try {
        const key = await h2.tenant('acme');
        const batch = { agent: 'synthetic', items: Array.from({ length: 10 }, () => ({ steps: 1 })) };
        expect((await request(h2.app).post('/v1/batches').set(bearer(key)).send(batch)).status).toBe(202);
        const next = await request(h2.app).post('/v1/runs').set(bearer(key)).send(synthetic());
        expect(next.status).toBe(429);
        expect(next.body.error.code).toBe('rate_limited');
        // Burst 4, 10 items taken: 6 in debt, so one more token is 3.5 s away.
        expect(Number(next.headers['retry-after'])).toBe(4);
        h2.clock.now += 4000;
        expect((await request(h2.app).post('/v1/runs').set(bearer(key)).send(synthetic())).status).toBe(202);
      } finally {
        await h2.close();
      }
    });

    it('limits reads, /tenants/me, cancels and resumes, but not the admin', async () => {
      const h2 = makeHarness({ ratePerSecond: 2 });
      try {
        const key = await h2.tenant('acme');
        const paths = ['/v1/runs', '/v1/tenants/me', '/v1/runs/run-acme-0123456789abcdef0123', '/v1/runs'];
        for (const path of paths) {
          expect((await request(h2.app).get(path).set(bearer(key))).status, path).not.toBe(429);
        }
        const limited = [
          request(h2.app).get('/v1/runs').set(bearer(key)),
          request(h2.app).get('/v1/tenants/me').set(bearer(key)),
          request(h2.app).post('/v1/runs/run-acme-0123456789abcdef0123/cancel').set(bearer(key)),
          request(h2.app).post('/v1/batches/batch-acme-0123456789abcdef/resume').set(bearer(key)),
          request(h2.app).get('/v1/batches/batch-acme-0123456789abcdef').set(bearer(key)),
        ];
        for (const call of limited) {
          const res = await call;
          expect(res.status).toBe(429);
          expect(res.headers['retry-after']).toBeDefined();
        }
        for (let i = 0; i < 10; i++) {
          expect((await request(h2.app).get('/v1/runs').set(h2.admin())).status).toBe(200);
        }
      } finally {
        await h2.close();
      }
    });

    it('charges a batch resume one token per item', async () => {
      const h2 = makeHarness({ ratePerSecond: 5 });
      try {
        const key = await h2.tenant('acme');
        h2.clock.now += 60_000;
        const batch = { agent: 'synthetic', items: Array.from({ length: 50 }, () => ({ steps: 1 })) };
        const created = await request(h2.app).post('/v1/batches').set(bearer(key)).send(batch);
        expect(created.status).toBe(202);
        const resume = await request(h2.app)
          .post(`/v1/batches/${created.body.batchId}/resume`)
          .set(bearer(key));
        expect(resume.status).toBe(202);
        const after = await request(h2.app).get('/v1/tenants/me').set(bearer(key));
        expect(after.status).toBe(429);
        expect(Number(after.headers['retry-after'])).toBeGreaterThanOrEqual(8);
      } finally {
        await h2.close();
      }
    });
  });

  describe('row 3: idempotency keys past their retention', () => {
    it('a key reused after retention with a new body starts a new run with the new body', async () => {
      const key = await h.tenant('acme');
      const first = await request(h.app)
        .post('/v1/runs')
        .set(bearer(key))
        .set('Idempotency-Key', 'k1')
        .send(synthetic(2));
      expect(first.status).toBe(202);
      h.clock.now += IDEMPOTENCY_RETENTION_MS + 60_000;
      const second = await request(h.app)
        .post('/v1/runs')
        .set(bearer(key))
        .set('Idempotency-Key', 'k1')
        .send(synthetic(5));
      expect(second.status).toBe(202);
      expect(second.body.runId).not.toBe(first.body.runId);
      const started = h.fleet.startRunCalls.find((c) => c.runId === second.body.runId);
      expect(started?.input).toMatchObject({ steps: 5 });
      // Within the new retention the key now names the new run.
      const replayed = await request(h.app)
        .post('/v1/runs')
        .set(bearer(key))
        .set('Idempotency-Key', 'k1')
        .send(synthetic(5));
      expect(replayed.status).toBe(200);
      expect(replayed.body.runId).toBe(second.body.runId);
    });

    it('property: the same key and body always answer the same run, whatever the interleaving', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 1, max: 3 })), {
            minLength: 1,
            maxLength: 12,
          }),
          async (calls) => {
            const h2 = makeHarness();
            try {
              const tenantKey = await h2.tenant('acme');
              const runOf = new Map<string, string>();
              const bodyOf = new Map<string, number>();
              for (const [k, steps] of calls) {
                const res = await request(h2.app)
                  .post('/v1/runs')
                  .set(bearer(tenantKey))
                  .set('Idempotency-Key', k)
                  .send(synthetic(steps));
                const firstBody = bodyOf.get(k);
                if (firstBody === undefined) {
                  expect(res.status).toBe(202);
                  bodyOf.set(k, steps);
                  runOf.set(k, res.body.runId);
                } else if (firstBody === steps) {
                  expect(res.status).toBe(200);
                  expect(res.body.runId).toBe(runOf.get(k));
                } else {
                  expect(res.status).toBe(422);
                  expect(res.body.error.details.runId).toBe(runOf.get(k));
                }
              }
              expect(h2.fleet.startRunCalls.length).toBe(runOf.size);
            } finally {
              await h2.close();
            }
          },
        ),
        { seed: 11, numRuns: 25 },
      );
    });
  });

  describe('row 1: payload limits', () => {
    it('refuses a batch whose items would exceed one Temporal payload with 413 naming the limit', async () => {
      const key = await h.tenant('acme', { maxQueued: 100_000 });
      const items = Array.from({ length: 1500 }, (_, i) => ({ incident: `${i} ${'x'.repeat(1990)}` }));
      const res = await request(h.app).post('/v1/batches').set(bearer(key)).send({ agent: 'triage', items });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
      expect(res.body.error.message).toMatch(/1572864 bytes/);
      expect(res.body.error.details.limitBytes).toBe(MAX_START_ARGUMENT_BYTES);
      expect(h.fleet.batches.size).toBe(0);
      // The same items in batches under the limit go through.
      const half = await request(h.app)
        .post('/v1/batches')
        .set(bearer(key))
        .send({ agent: 'triage', items: items.slice(0, 500) });
      expect(half.status).toBe(202);
    });

    it('refuses a run spec over the limit (the body limit keeps HTTP bodies under it)', () => {
      expect(() =>
        assertFitsOnePayload({ input: 'x'.repeat(MAX_START_ARGUMENT_BYTES) }, 'The run', ''),
      ).toThrow(/limit is 1572864 bytes/);
      expect(() => assertFitsOnePayload({ input: 'x'.repeat(1000) }, 'The run', '')).not.toThrow();
    });
  });

  describe('row 7: default per-run caps', () => {
    it('refuses a run over the token cap or the wall-time cap with 400, and one under them is accepted', async () => {
      const key = await h.tenant('acme');
      const tooManyTokens = { agent: 'synthetic', input: { steps: 1000, tokensPerStep: 100_000 } };
      const tooLong = { agent: 'synthetic', input: { steps: 10, stepMs: 600_000 } };
      const declared = { ...synthetic(), estimatedTokens: DEFAULT_RUN_CAPS.maxTokens + 1 };
      for (const body of [tooManyTokens, tooLong, declared]) {
        const res = await request(h.app).post('/v1/runs').set(bearer(key)).send(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(JSON.stringify(res.body.error.details)).toMatch(/RUN_MAX_(TOKENS|WALL_SECONDS)/);
      }
      const batch = await request(h.app)
        .post('/v1/batches')
        .set(bearer(key))
        .send({ agent: 'synthetic', items: [{ steps: 1 }, tooLong.input] });
      expect(batch.status).toBe(400);
      expect(batch.body.error.details[0].path).toBe('items.1');
      expect(h.fleet.submitCalls.length).toBe(0);
      const fine = { agent: 'synthetic', input: { steps: 10, stepMs: 1000, tokensPerStep: 1000 } };
      expect((await request(h.app).post('/v1/runs').set(bearer(key)).send(fine)).status).toBe(202);
    });

    it('reads the caps from the environment', () => {
      const caps = loadConfig({ RUN_MAX_TOKENS: '5000', RUN_MAX_WALL_SECONDS: '60' }).runCaps;
      expect(caps).toEqual({ maxTokens: 5000, maxWallSeconds: 60 });
      expect(loadConfig({}).runCaps).toEqual(DEFAULT_RUN_CAPS);
    });
  });

  describe('row 2: metrics access and refresh', () => {
    it('needs the admin token on the API; the metrics-only app serves them without', async () => {
      const key = await h.tenant('acme');
      expect((await request(h.app).get('/metrics')).status).toBe(401);
      expect((await request(h.app).get('/metrics').set(bearer(key))).status).toBe(403);
      const admin = await request(h.app).get('/metrics').set(h.admin());
      expect(admin.status).toBe(200);
      expect(admin.text).toContain('fairway_fleet_up 1');
      const store = openSqliteStore(':memory:');
      try {
        const { metrics } = createApps({
          fleet: memoryFleet(),
          db: store,
          adminToken: 'a'.repeat(32),
          tenantDefaults: { maxQueued: 1, maxInFlight: 1, ratePerSecond: 1 },
          log: pino({ level: 'silent' }),
        });
        const open = await request(metrics).get('/metrics');
        expect(open.status).toBe(200);
        expect(open.text).toContain('fairway_fleet_up');
        expect((await request(metrics).get('/v1/runs')).status).toBe(404);
      } finally {
        await store.close();
      }
    });

    it('refreshes the fleet series at most every 5 s, however often it is scraped', async () => {
      await h.tenant('acme');
      await h.tenant('globex');
      let statusCalls = 0;
      let tenantCalls = 0;
      const schedulerStatus = h.fleet.schedulerStatus.bind(h.fleet);
      const tenantStatuses = h.fleet.tenantStatuses.bind(h.fleet);
      h.fleet.schedulerStatus = () => (statusCalls++, schedulerStatus());
      h.fleet.tenantStatuses = (t) => (tenantCalls++, tenantStatuses(t));
      for (let i = 0; i < 5; i++) {
        expect((await request(h.app).get('/metrics').set(h.admin())).status).toBe(200);
      }
      // One status query and one query for all tenants.
      expect(statusCalls).toBe(1);
      expect(tenantCalls).toBe(1);
      h.clock.now += METRICS_REFRESH_MS;
      await request(h.app).get('/metrics').set(h.admin());
      expect(statusCalls).toBe(2);
    });
  });

  describe('row 10: slow clients and connection cap', () => {
    it('closes a connection whose headers never finish, and caps connections', async () => {
      const limits = { headersTimeoutMs: 300, requestTimeoutMs: 600, maxConnections: 1 };
      await withLimitedServer(h.app, limits, async ({ port, client }) => {
        const slow = await client();
        let slowClosed = false;
        slow.socket.once('close', () => (slowClosed = true));
        slow.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        // While it holds the only slot, a second connection asking a complete question is dropped
        // unanswered, before the first one's headers timeout frees the slot.
        const second = connect(port, '127.0.0.1');
        let secondAnswer = '';
        second.on('data', (d: Buffer) => (secondAnswer += d.toString()));
        second.on('error', () => undefined);
        second.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        await new Promise((r) => second.once('close', r));
        expect(secondAnswer, 'the connection over the cap was answered').toBe('');
        expect(slowClosed, 'the second connection outlived the first').toBe(false);
        if (!slowClosed) await new Promise((r) => slow.socket.once('close', r));
        expect(slow.answer()).toMatch(/^HTTP\/1\.1 408/);
      });
    }, 30_000);

    it('reads the limits from the environment with the documented defaults', () => {
      expect(loadConfig({}).http).toEqual(DEFAULT_HTTP_LIMITS);
      expect(loadConfig({}).metrics).toEqual({ port: undefined, host: '127.0.0.1' });
    });
  });

  describe('row 15: the OpenAPI document', () => {
    it('discriminates request bodies on agent, so a triage run with synthetic input fails the schema', () => {
      const doc = openApiDocument() as unknown as {
        components: { schemas: Record<string, Record<string, unknown>> };
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      const { schemas } = doc.components;
      for (const name of ['RunRequest', 'BatchRequest']) {
        expect(schemas[name]?.discriminator).toMatchObject({ propertyName: 'agent' });
      }
      const triage = schemas.TriageRunRequest as { properties: Record<string, unknown>; required: string[] };
      expect(triage.properties.agent).toMatchObject({ enum: ['triage'] });
      expect(triage.properties.input).toEqual({ $ref: '#/components/schemas/TriageInput' });
      expect(triage.required).toContain('input');
      const post = doc.paths['/v1/runs']?.post?.responses ?? {};
      for (const code of ['400', '401', '403', '404', '413', '415', '422', '429', '431', '503']) {
        expect(post[code], code).toBeDefined();
      }
      expect(doc.paths['/v1/admin/drain']?.post?.responses['415']).toBeDefined();
    });

    it('answers TRACE with 405 in the JSON error shape', async () => {
      const res = await request(h.app).trace('/v1/runs');
      expect(res.status).toBe(405);
      expect(res.body.error.code).toBe('method_not_allowed');
    });
  });

  describe('row 11: admin token length', () => {
    it('refuses a configuration whose ADMIN_TOKEN is shorter than 32 characters', () => {
      expect(() => loadConfig({ ADMIN_TOKEN: 'x' })).toThrow(/ADMIN_TOKEN: must be at least 32 characters/);
      expect(loadConfig({ ADMIN_TOKEN: 'a'.repeat(32) }).adminToken).toBe('a'.repeat(32));
      expect(loadConfig({ ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
    });

    it('createApp refuses a short admin token', () => {
      const store = openSqliteStore(':memory:');
      expect(() =>
        createApp({
          fleet: memoryFleet(),
          db: store,
          adminToken: 'short',
          tenantDefaults: { maxQueued: 1, maxInFlight: 1, ratePerSecond: 1 },
          log: pino({ level: 'silent' }),
        }),
      ).toThrow(/at least 32/);
      void store.close();
    });
  });
});

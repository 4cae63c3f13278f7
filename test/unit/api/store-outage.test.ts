import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { createApp } from '../../../src/api/app';
import type { ApiStore } from '../../../src/stores/api/api-store';
import { openStore } from '../../../src/stores/open';
import { DB_UNAVAILABLE_RETRY_SECONDS } from '../../../src/stores/api/api-store-pg';
import { postgresMissing, startTestPostgres } from '../../support/postgres';
import type { TestPostgres } from '../../support/postgres';
import { ADMIN, bearer, synthetic } from './harness';
import { MemoryFleet } from './memory-fleet';
import { isPgUnavailable, openPool } from '../../../src/stores/engine/pg';

if (postgresMissing) console.warn(postgresMissing);

/**
 * The API on its PostgreSQL store while the database goes away and comes back: every request that
 * needs the store answers 503 with Retry-After (never 500), and the same process serves again after.
 */
describe.skipIf(postgresMissing)('API store outage (PostgreSQL restarted under the API)', () => {
  let server: TestPostgres;
  let store: ApiStore;
  let dir: string;
  let app: ReturnType<typeof createApp>;
  let key: string;

  beforeAll(async () => {
    server = await startTestPostgres();
    store = await openStore(await server.freshDatabase());
    dir = mkdtempSync(join(tmpdir(), 'fairway-outage-'));
    const fleet = new MemoryFleet(Date.now, openSqliteEffectStore(join(dir, 'effects.sqlite')));
    app = createApp({
      fleet,
      db: store,
      adminToken: ADMIN,
      tenantDefaults: { maxQueued: 100, maxInFlight: 10, ratePerSecond: 1000 },
      log: pino({ level: 'silent' }),
    });
    const created = await request(app).put('/v1/admin/tenants/acme').set(bearer(ADMIN)).send({});
    expect(created.status).toBe(201);
    key = (created.body as { apiKey: string }).apiKey;
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  /** Every kind of request that touches the store, each answering `status`. */
  async function probe(): Promise<number[]> {
    const answers = await Promise.all([
      request(app).get('/v1/runs').set(bearer(key)), // authentication reads the tenant by key hash
      request(app)
        .post('/v1/runs')
        .set(bearer(key))
        .send({ ...synthetic(1), idempotencyKey: `k-${Math.random()}` }),
      request(app).get('/v1/admin/tenants').set(bearer(ADMIN)),
      request(app).get('/v1/triggers').set(bearer(key)),
    ]);
    for (const res of answers) {
      if (res.status === 503) {
        expect(res.headers['retry-after']).toBe(String(DB_UNAVAILABLE_RETRY_SECONDS));
        expect(res.body).toMatchObject({ error: { code: 'unavailable' } });
      }
    }
    return answers.map((r) => r.status);
  }

  /** Probes until every answer is `want` (the pool may need a few tries to drop dead connections). */
  async function untilAll(want: (s: number) => boolean): Promise<number[]> {
    let last: number[] = [];
    for (let i = 0; i < 120; i++) {
      last = await probe();
      expect(last.every((s) => s === 503 || s < 500)).toBe(true); // never a 500, whatever the moment
      if (last.every(want)) return last;
      await new Promise((r) => setTimeout(r, 500));
    }
    return last;
  }

  it.each(['stopped (fast shutdown)', 'SIGKILLed (crash)'] as const)(
    'answers 503 with Retry-After while PostgreSQL is %s, and serves again once it is back',
    async (how) => {
      expect(await untilAll((s) => s < 300)).toEqual([200, 202, 200, 200]);
      if (how === 'stopped (fast shutdown)') await server.pg.stop();
      else await server.pg.child().kill();
      expect(await untilAll((s) => s === 503)).toEqual([503, 503, 503, 503]);
      await server.pg.restart({ kill: false });
      expect(await untilAll((s) => s < 300)).toEqual([200, 202, 200, 200]);
    },
    300_000,
  );

  // The restart itself (test support, not the store) hung in 3 whole-suite runs, never alone: a hung
  // attempt fails at 60 s and the test runs again; a store that does not recover fails every one.
  it(
    'survives the server dying under a client checked out of the pool (a transaction between statements)',
    { timeout: 60_000, retry: 2 },
    async () => {
      // This test timed out once in a while in the whole unit project (never alone): the steps it
      // reached are printed when it does not finish, to tell where it waits.
      const t0 = Date.now();
      const steps: string[] = [];
      const mark = (m: string) => steps.push(`${m} +${Date.now() - t0} ms`);
      // A server of its own, so an attempt run again does not meet the last one's.
      const own = await startTestPostgres();
      onTestFailed(() =>
        console.error(
          `store-outage: the steps reached: ${steps.join('; ')}\nPostgreSQL's log:\n${own.pg.child().tail(4000)}`,
        ),
      );
      const pool = openPool(await own.freshDatabase(), 2);
      try {
        mark(`database ready on port ${own.pg.port}`);
        const client = await pool.connect();
        await client.query('BEGIN');
        mark('transaction begun');
        await own.pg.child().kill();
        mark('server killed');
        // The query fails once the connection has ended, the moment the client also emits 'error'
        // (no listener of the test's own: unhandled, that event would end the process).
        const err: unknown = await client.query('SELECT 1').catch((e: unknown) => e);
        mark('query answered');
        expect(isPgUnavailable(err)).toBe(true);
        client.release(true);
        await own.pg.restart({ kill: false });
        mark('server restarted');
        const r = await pool.query<{ one: number }>('SELECT 1 AS one');
        expect(r.rows).toEqual([{ one: 1 }]);
      } finally {
        await pool.end();
      }
    },
  );
});

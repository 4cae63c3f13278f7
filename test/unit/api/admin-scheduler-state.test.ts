import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../src/api/app';
import { openSqliteStore } from '../../../src/stores/api/api-store-sqlite';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { openSqliteSchedulerState } from '../../../src/stores/scheduler-state/scheduler-state-sqlite';
import { ADMIN, bearer } from './harness';
import { MemoryFleet } from './memory-fleet';

/** The API with a scheduler state store of its own, on the in-memory fleet. */
function app() {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-sched-state-api-'));
  const fleet = new MemoryFleet(Date.now, openSqliteEffectStore(join(dir, 'e.sqlite')));
  const schedulerState = openSqliteSchedulerState(join(dir, 'fairway.db'));
  const api = createApp({
    fleet,
    db: openSqliteStore(join(dir, 'fairway.db')),
    schedulerState,
    adminToken: ADMIN,
    tenantDefaults: { maxQueued: 100, maxInFlight: 10, ratePerSecond: 1000 },
    log: pino({ level: 'silent' }),
  });
  return { api, fleet, schedulerState };
}

describe('the operator state outlives the scheduler chain (issue 27, finding 3)', () => {
  it('drain, patch and resume are kept in the store', async () => {
    const { api, schedulerState } = app();
    await request(api).post('/v1/admin/drain').set(bearer(ADMIN)).send({ intake: 'hold' }).expect(200);
    await request(api).patch('/v1/admin/scheduler').set(bearer(ADMIN)).send({ concurrency: 7 }).expect(200);
    await request(api)
      .patch('/v1/admin/scheduler')
      .set(bearer(ADMIN))
      .send({ floors: { batch: 0.1 } })
      .expect(200);
    expect(await schedulerState.get()).toMatchObject({
      drain: 'hold',
      settings: { concurrency: 7, floors: { batch: 0.1 } },
    });
    await request(api).post('/v1/admin/resume').set(bearer(ADMIN)).expect(200);
    expect(await schedulerState.get()).toMatchObject({ drain: null, settings: { concurrency: 7 } });
  });

  it('the store is written before the chain is told: a drain the chain never got is still kept', async () => {
    const { api, fleet, schedulerState } = app();
    fleet.drain = () => Promise.reject(new Error('the scheduler is lost'));
    const r = await request(api).post('/v1/admin/drain').set(bearer(ADMIN)).send({ intake: 'hold' });
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect((await schedulerState.get()).drain).toBe('hold');
  });

  it('a patch the schema refuses is not kept', async () => {
    const { api, schedulerState } = app();
    await request(api).patch('/v1/admin/scheduler').set(bearer(ADMIN)).send({ concurrency: 0 }).expect(400);
    expect((await schedulerState.get()).settings).toEqual({});
  });
});

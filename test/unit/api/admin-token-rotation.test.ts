import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/api/app';
import { loadConfig } from '../../../src/config';
import { adminTokenOf } from '../../../src/infra/admin-token';
import { openSqliteStore } from '../../../src/stores/api/api-store-sqlite';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { bearer, useHarness } from './harness';
import { MemoryFleet } from './memory-fleet';

/** Issue 30, finding 11: the admin token rotates without downtime, and a generated one survives a restart. */

const CURRENT = 'current-admin-token-0123456789abcdef';
const NEXT = 'next-admin-token-0123456789abcdef0123';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'fairway-admin-'));
  dirs.push(d);
  return d;
};

describe('issue 30: admin token rotation (finding 11)', () => {
  it('accepts the current and the next token at once, and nothing else', async () => {
    const dir = tmp();
    const app = createApp({
      fleet: new MemoryFleet(Date.now, openSqliteEffectStore(path.join(dir, 'e.sqlite'))),
      db: openSqliteStore(path.join(dir, 'api.sqlite')),
      adminToken: CURRENT,
      adminTokenNext: NEXT,
      tenantDefaults: { maxQueued: 10, maxInFlight: 1, ratePerSecond: 100 },
      log: pino({ level: 'silent' }),
    });
    for (const token of [CURRENT, NEXT])
      await request(app).get('/v1/admin/tenants').set(bearer(token)).expect(200);
    await request(app)
      .get('/v1/admin/tenants')
      .set(bearer(`${NEXT}x`))
      .expect(401);
  });

  it('ADMIN_TOKEN_NEXT is read from the environment, at least 32 characters', () => {
    expect(loadConfig({ ADMIN_TOKEN: CURRENT, ADMIN_TOKEN_NEXT: NEXT }).adminTokenNext).toBe(NEXT);
    expect(() => loadConfig({ ADMIN_TOKEN: CURRENT, ADMIN_TOKEN_NEXT: 'short' })).toThrow();
  });

  it('a generated token is kept in DATA_DIR (owner-only) and the same after a restart', () => {
    const dir = tmp();
    const first = adminTokenOf(undefined, dir);
    expect(first.generated).toBe(true);
    expect(first.token.length).toBeGreaterThanOrEqual(32);
    expect(statSync(path.join(dir, 'admin-token')).mode & 0o077).toBe(0);
    expect(adminTokenOf(undefined, dir).token).toBe(first.token);
    // A configured token wins and nothing is written.
    const other = tmp();
    expect(adminTokenOf(CURRENT, other)).toEqual({ token: CURRENT, generated: false });
  });
});

describe('issue 30: /metrics refuses a tenant key in its own words (finding 11)', () => {
  const h = useHarness({ tenants: ['acme'] });
  it('403 naming /metrics, not /v1/admin', async () => {
    const res = await request(h.app).get('/metrics').set(bearer(h.keys.acme!));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/\/metrics/);
    expect(res.body.error.message).not.toMatch(/\/v1\/admin/);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import request from 'supertest';
import type { Express } from 'express';
import { openStore, type ApiStore } from '../../../src/api/stores/store';
import { createApp } from '../../../src/api/app';
import type { TenantSettings } from '../../../src/scheduler/types';
import { FakeFleet } from './fake-fleet';

export const ADMIN = 'admin-token-for-tests-0123456789';

export interface Harness {
  app: Express;
  fleet: FakeFleet;
  store: ApiStore;
  dir: string;
  clock: { now: number };
  admin: () => { Authorization: string };
  /** Creates a tenant through the API and returns its key. */
  tenant: (id: string, settings?: Partial<TenantSettings>) => Promise<string>;
  close: () => void;
}

export function bearer(key: string) {
  return { Authorization: `Bearer ${key}` };
}

export function makeHarness(opts: { ratePerSecond?: number; log?: pino.Logger } = {}): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-api-'));
  const store = openStore(join(dir, 'nested', 'api.sqlite'));
  const fleet = new FakeFleet();
  const clock = { now: Date.parse('2025-06-01T12:00:00.000Z') };
  const app = createApp({
    fleet,
    db: store,
    adminToken: ADMIN,
    tenantDefaults: { maxQueued: 100, maxInFlight: 10, ratePerSecond: opts.ratePerSecond ?? 1000 },
    log: opts.log ?? pino({ level: 'silent' }),
    now: () => clock.now,
  });
  const admin = () => bearer(ADMIN);
  return {
    app,
    fleet,
    store,
    dir,
    clock,
    admin,
    async tenant(id, settings = {}) {
      const res = await request(app).put(`/v1/admin/tenants/${id}`).set(admin()).send(settings);
      if (res.status !== 201) throw new Error(`tenant ${id}: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { apiKey: string }).apiKey;
    },
    close() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const synthetic = (steps = 2) => ({ agent: 'synthetic', input: { steps } });

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import request from 'supertest';
import type { Express } from 'express';
import { afterEach, beforeEach } from 'vitest';
import { openSqliteEffectStore } from '../../../src/stores/effects/effect-store-sqlite';
import { type BatchItemStore } from '../../../src/stores/batch-items/batch-items';
import { openSqliteBatchItems } from '../../../src/stores/batch-items/batch-items-sqlite';
import type { ApiStore } from '../../../src/stores/api/api-store';
import { openSqliteStore } from '../../../src/stores/api/api-store-sqlite';
import { createApp } from '../../../src/api/app';
import type { TenantSettings } from '../../../src/scheduler/types';
import type { EventCaps } from '../../../src/config';
import { MemoryFleet } from './memory-fleet';
import type { AgentCatalog } from '../../../src/api/agents/catalog';

export const ADMIN = 'admin-token-for-tests-0123456789';

export interface HarnessOptions {
  ratePerSecond?: number;
  log?: pino.Logger;
  /** Caps on triggers and webhook secrets; default DEFAULT_EVENT_CAPS. */
  eventCaps?: EventCaps;
  /** Tenants created (with default settings) before each test; their keys are in `keys`. */
  tenants?: string[];
  /** The agents runs may name; default the built-ins. */
  agents?: AgentCatalog;
}

export interface Harness {
  app: Express;
  fleet: MemoryFleet;
  store: ApiStore;
  /** Batches sent in parts (the memory fleet reads their items here, as a worker would). */
  batchItems: BatchItemStore;
  dir: string;
  clock: { now: number };
  /** API keys of the tenants named in the options. */
  keys: Record<string, string>;
  admin: () => { Authorization: string };
  /** Creates a tenant through the API and returns its key. */
  tenant: (id: string, settings?: Partial<TenantSettings>) => Promise<string>;
  /** `POST /v1/runs` as the tenant with this key. */
  submit: (key: string, body?: unknown, headers?: Record<string, string>) => request.Test;
  close: () => Promise<void>;
}

export function bearer(key: string) {
  return { Authorization: `Bearer ${key}` };
}

export const synthetic = (steps = 2) => ({ agent: 'synthetic', input: { steps } });

/** The API on a fleet built on the real scheduler core (in memory, no Temporal), with its own stores. */
export function makeHarness(opts: HarnessOptions = {}): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-api-'));
  const store = openSqliteStore(join(dir, 'nested', 'api.sqlite'));
  const effects = openSqliteEffectStore(join(dir, 'effects.sqlite'));
  const clock = { now: Date.parse('2025-06-01T12:00:00.000Z') };
  const fleet = new MemoryFleet(() => clock.now, effects);
  const batchItems = openSqliteBatchItems(join(dir, 'batch-items.sqlite'));
  fleet.storedItems = (batchId, indexes) => batchItems.readItems(batchId, indexes);
  const app = createApp({
    fleet,
    db: store,
    batchItems,
    adminToken: ADMIN,
    tenantDefaults: { maxQueued: 100, maxInFlight: 10, ratePerSecond: opts.ratePerSecond ?? 1000 },
    log: opts.log ?? pino({ level: 'silent' }),
    now: () => clock.now,
    ...(opts.eventCaps ? { eventCaps: opts.eventCaps } : {}),
    ...(opts.agents ? { agents: opts.agents } : {}),
  });
  const admin = () => bearer(ADMIN);
  return {
    app,
    fleet,
    store,
    batchItems,
    dir,
    clock,
    keys: {},
    admin,
    async tenant(id, settings = {}) {
      const res = await request(app).put(`/v1/admin/tenants/${id}`).set(admin()).send(settings);
      if (res.status !== 201) throw new Error(`tenant ${id}: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { apiKey: string }).apiKey;
    },
    submit: (key, body = synthetic(), headers = {}) =>
      request(app)
        .post('/v1/runs')
        .set(bearer(key))
        .set(headers)
        .send(body as object),
    async close() {
      await store.close();
      await effects.close();
      await batchItems.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh harness for each test of the enclosing `describe` (closed after it), with the option's
 * tenants already created. The returned object stays the same; its fields are renewed before each test.
 */
export function useHarness(opts: HarnessOptions = {}): Harness {
  const h = {} as Harness;
  beforeEach(async () => {
    Object.assign(h, makeHarness(opts));
    for (const id of opts.tenants ?? []) h.keys[id] = await h.tenant(id);
  });
  afterEach(() => h.close());
  return h;
}

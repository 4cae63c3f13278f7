import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiStore } from '../../../src/stores/api/api-store';
import { openSqliteStore } from '../../../src/stores/api/api-store-sqlite';
import { openStore } from '../../../src/stores/open';
import { canonicalHash, canonicalJson } from '../../../src/api/crypto/canonical-json';
import { IDEMPOTENCY_RETENTION_MS, PENDING_CLAIM_TTL_MS } from '../../../src/stores/idempotency/idempotency';
import { EVENT_RETENTION_MS } from '../../../src/stores/events/event-store';
import type { NewEvent, NewEventRun } from '../../../src/stores/events/event-store';
import type { TriggerSpec } from '../../../src/contract/triggers';
import { SharedBuckets } from '../../../src/api/intake/token-buckets';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

const settings = {
  weight: 1,
  maxQueued: 5,
  maxInFlight: 2,
  budget: { tokens: null, period: 'none' as const },
  onBudgetExhausted: 'fail' as const,
};

let dir: string;
/** The same suite against both engines: a SQLite file and a PostgreSQL database. */
const engines = [sqliteEngine('api.sqlite', () => dir), postgresEngine()];

const envelope = (id: string) => ({
  id,
  type: 'order.created',
  source: 'shop',
  specversion: '1.0',
  data: null,
});
const newEvent = (id: string, receivedAt: number): NewEvent => ({
  tenant: 'acme',
  eventId: id,
  bodyHash: `hash-${id}`,
  envelope: envelope(id),
  receivedAt,
});
const run = (trigger: string, status: NewEventRun['status'] = 'pending'): NewEventRun => ({
  trigger,
  runId: `run-acme-${trigger}`,
  agent: 'synthetic',
  priority: 'standard',
  input: { steps: 1 },
  estimatedTokens: 10,
  status,
});
const spec: TriggerSpec = {
  eventType: 'order.created',
  filter: {},
  agent: 'synthetic',
  priority: 'standard',
};

describe.each(engines)('API store ($name)', (engine) => {
  const open: ApiStore[] = [];
  let store: ApiStore;
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-store-'));
    if (!engine.skip) store = await openAt(await engine.location());
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function openAt(location: string): Promise<ApiStore> {
    const s = await openStore(location);
    open.push(s);
    return s;
  }

  it.skipIf(engine.skip)('keeps tenants across reopening', async () => {
    const location = await engine.location();
    const first = await openStore(location);
    await first.tenants.create('acme', { ...settings, budget: { tokens: 5000, period: 'day' } }, 'h', 1000);
    await first.close();
    const again = await openAt(location);
    expect(await again.listTenants()).toEqual([
      {
        tenant: 'acme',
        settings: { ...settings, budget: { tokens: 5000, period: 'day' } },
        disabled: false,
        approverKey: false,
        createdAt: '1970-01-01T00:00:01.000Z',
        updatedAt: '1970-01-01T00:00:01.000Z',
      },
    ]);
  });

  it.skipIf(engine.skip)(
    'finds tenants by key hash; creation does not overwrite, rotation replaces the hash',
    async () => {
      const t = store.tenants;
      expect(await t.create('acme', settings, 'h1', 1)).toBe(true);
      expect(await t.create('acme', { ...settings, weight: 9 }, 'h2', 2)).toBe(false);
      expect((await t.findByKeyHash('h1'))?.settings.weight).toBe(1);
      expect(await t.setKeyHash('acme', 'h3', 3)).toBe(true);
      expect(await t.findByKeyHash('h1')).toBeUndefined();
      expect((await t.findByKeyHash('h3'))?.tenant).toBe('acme');
      expect(await t.setKeyHash('ghost', 'h4', 3)).toBe(false);
      expect(await t.update('acme', { ...settings, weight: 2.5 }, 4)).toBe(true);
      expect(await t.get('acme')).toMatchObject({
        settings: { weight: 2.5 },
        updatedAt: new Date(4).toISOString(),
      });
      expect(await t.update('ghost', settings, 4)).toBe(false);
      expect(await t.update('acme', { ...settings, onBudgetExhausted: 'park' }, 5)).toBe(true);
      expect((await t.get('acme'))?.settings.onBudgetExhausted).toBe('park');
      await t.create('beta', settings, 'h5', 5);
      expect((await t.list()).map((r) => r.tenant)).toEqual(['acme', 'beta']);
    },
  );

  it.skipIf(engine.skip)('keeps key weights, replaces them on update, and clears them', async () => {
    const t = store.tenants;
    const keyWeights = { 'user-42': 3, 'org:7/bob@x.io': 0.25 };
    await t.create('acme', { ...settings, keyWeights }, 'h', 1);
    expect((await t.get('acme'))?.settings.keyWeights).toEqual(keyWeights);
    await t.create('beta', settings, 'h2', 1);
    expect((await t.get('beta'))?.settings).not.toHaveProperty('keyWeights');
    await t.update('acme', { ...settings, keyWeights: { 'user-7': 2 } }, 2);
    expect((await t.get('acme'))?.settings.keyWeights).toEqual({ 'user-7': 2 });
    await t.update('acme', settings, 3);
    expect((await t.get('acme'))?.settings).not.toHaveProperty('keyWeights');
  });

  it.skipIf(engine.skip)(
    'keeps an approver key hash apart from the tenant key; a new one replaces it',
    async () => {
      const t = store.tenants;
      await t.create('acme', settings, 'k1', 1);
      expect((await t.get('acme'))?.approverKey).toBe(false);
      expect(await t.setApproverKeyHash('acme', 'a1', 2)).toBe(true);
      expect(await t.get('acme')).toMatchObject({ approverKey: true, updatedAt: new Date(2).toISOString() });
      expect((await t.findByApproverKeyHash('a1'))?.tenant).toBe('acme');
      // Each hash opens only its own role.
      expect(await t.findByKeyHash('a1')).toBeUndefined();
      expect(await t.findByApproverKeyHash('k1')).toBeUndefined();
      expect(await t.setApproverKeyHash('acme', 'a2', 3)).toBe(true);
      expect(await t.findByApproverKeyHash('a1')).toBeUndefined();
      expect(await t.setApproverKeyHash('ghost', 'a3', 3)).toBe(false);
    },
  );

  it.skipIf(engine.skip)(
    'deletes a tenant with its keys, triggers, secrets, events, idempotency keys and buckets, and no other',
    async () => {
      const t = store.tenants;
      const ev = store.events;
      for (const id of ['acme', 'other']) {
        await t.create(id, settings, `k-${id}`, 1);
        await ev.putTrigger(id, 'a', spec, 1);
        await ev.putSecret(id, 'shop', 'secret', 1);
        await store.idempotency.claim({
          tenant: id,
          key: 'k',
          bodyHash: 'b',
          runId: `run-${id}`,
          createdAt: 1,
        });
        await store.rateLimits.take(`submit:${id}`, 1, { ratePerSecond: 1, burst: 2 }, 1);
      }
      await t.setApproverKeyHash('acme', 'a-acme', 2);
      await ev.record({ ...newEvent('e1', 1), tenant: 'acme' }, () => []);
      expect(await t.delete('acme')).toBe(true);
      expect(await t.get('acme')).toBeUndefined();
      expect(await t.findByKeyHash('k-acme')).toBeUndefined();
      expect(await t.findByApproverKeyHash('a-acme')).toBeUndefined();
      expect(await ev.listTriggers('acme')).toEqual([]);
      expect(await ev.listSecrets('acme')).toEqual([]);
      expect(await ev.get('acme', 'e1')).toBeUndefined();
      expect(
        await store.idempotency.claim({
          tenant: 'acme',
          key: 'k',
          bodyHash: 'b',
          runId: 'run-new',
          createdAt: 2,
        }),
      ).toMatchObject({ claimed: true });
      // A fresh bucket: full again (burst 2), where the old one had 1 left.
      expect(await store.rateLimits.take('submit:acme', 2, { ratePerSecond: 1, burst: 2 }, 1)).toMatchObject({
        ok: true,
      });
      expect(await t.delete('acme')).toBe(false);
      expect((await t.get('other'))?.tenant).toBe('other');
      expect(await ev.listTriggers('other')).toHaveLength(1);
      expect(await ev.listSecrets('other')).toHaveLength(1);
    },
  );

  it.skipIf(engine.skip)(
    'claims an idempotency key once; release removes a pending claim; stale claims are taken over',
    async () => {
      const idem = store.idempotency;
      const rec = { tenant: 't', key: 'k', bodyHash: 'b', runId: 'run-t-1', createdAt: 10_000 };
      expect(await idem.claim(rec)).toEqual({ claimed: true, runId: 'run-t-1' });
      expect(await idem.claim({ ...rec, runId: 'run-t-2', createdAt: 10_001 })).toMatchObject({
        claimed: false,
        existing: { state: 'pending', runId: 'run-t-1' },
      });
      await idem.release('t', 'k');
      expect(await idem.count()).toBe(0);
      expect(await idem.claim(rec)).toMatchObject({ claimed: true });
      // A stale pending claim with the same body is taken over under the dead request's run id.
      const stale = 10_000 + PENDING_CLAIM_TTL_MS + 1;
      expect(await idem.claim({ ...rec, runId: 'run-t-3', createdAt: stale })).toEqual({
        claimed: true,
        runId: 'run-t-1',
      });
      await idem.complete('t', 'k');
      await idem.release('t', 'k'); // a done record is never released
      expect((await idem.find('t', 'k'))?.state).toBe('done');
      // Past its retention the key is new again, with a new run id.
      const later = stale + IDEMPOTENCY_RETENTION_MS + 1;
      expect(await idem.claim({ ...rec, runId: 'run-t-4', createdAt: later })).toEqual({
        claimed: true,
        runId: 'run-t-4',
      });
      expect(await idem.prune(later + IDEMPOTENCY_RETENTION_MS + 1)).toBe(1);
      expect(await idem.find('t', 'k')).toBeUndefined();
    },
  );

  it.skipIf(engine.skip)(
    'takes a pending claim over after the TTL the caller gives, not before',
    async () => {
      const idem = store.idempotency;
      const rec = { tenant: 't', key: 'short', bodyHash: 'b', runId: 'run-t-1', createdAt: 10_000 };
      const ttl = 35_000;
      expect(await idem.claim(rec, ttl)).toEqual({ claimed: true, runId: 'run-t-1' });
      expect(await idem.claim({ ...rec, runId: 'run-t-2', createdAt: 10_000 + ttl }, ttl)).toMatchObject({
        claimed: false,
        existing: { state: 'pending', runId: 'run-t-1' },
      });
      // Stale under this TTL, still live under the default one.
      const stale = { ...rec, runId: 'run-t-3', createdAt: 10_000 + ttl + 1 };
      expect(await idem.claim(stale)).toMatchObject({ claimed: false });
      expect(await idem.claim(stale, ttl)).toEqual({ claimed: true, runId: 'run-t-1' });
    },
  );

  it.skipIf(engine.skip)('lets exactly one of two stores sharing a location claim a key', async () => {
    const location = await engine.location();
    const [a, b] = [await openAt(location), await openAt(location)];
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).idempotency.claim({
          tenant: 't',
          key: 'shared',
          bodyHash: 'b',
          runId: `run-t-${i}`,
          createdAt: 50_000,
        }),
      ),
    );
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
  });

  it.skipIf(engine.skip)("keeps a trigger's fairness key and each event run's own", async () => {
    const ev = store.events;
    await ev.putTrigger('acme', 'keyed', { ...spec, fairnessKey: '{{data.user}}' }, 1);
    expect((await ev.getTrigger('acme', 'keyed'))?.spec.fairnessKey).toBe('{{data.user}}');
    const recorded = await ev.record(newEvent('e1', 1000), () => [
      { ...run('keyed'), fairnessKey: 'user-42' },
      run('plain'),
    ]);
    expect(recorded.event.runs).toEqual([
      expect.objectContaining({ trigger: 'keyed', fairnessKey: 'user-42' }),
      expect.not.objectContaining({ fairnessKey: expect.anything() }),
    ]);
    await ev.reopen('acme', 'e1', [{ ...run('later'), fairnessKey: 'user-7' }], 2000);
    const read = await ev.get('acme', 'e1');
    expect(read?.runs.map((r) => r.fairnessKey ?? null)).toEqual(['user-42', 'user-7', null]);
  });

  it.skipIf(engine.skip)('records an event once, with the runs its triggers make', async () => {
    const ev = store.events;
    expect(await ev.putTrigger('acme', 'a', spec, 1)).toBe(true);
    expect(await ev.putTrigger('acme', 'a', { ...spec, priority: 'batch' }, 2)).toBe(false);
    expect(await ev.getTrigger('acme', 'a')).toEqual({ spec: { ...spec, priority: 'batch' }, updatedAt: 2 });
    await ev.putTrigger('acme', 'b', spec, 3);
    await ev.putTrigger('other', 'z', spec, 3);
    const seen: string[][] = [];
    const runsFor = (triggers: { name: string }[]) => {
      seen.push(triggers.map((t) => t.name));
      return triggers.map((t) => run(t.name));
    };
    const first = await ev.record(newEvent('e1', 1000), runsFor);
    expect(first.created).toBe(true);
    expect(seen).toEqual([['a', 'b']]);
    expect(first.event).toMatchObject({
      tenant: 'acme',
      eventId: 'e1',
      envelope: envelope('e1'),
      receivedAt: 1000,
      state: 'pending',
      attempts: 0,
      nextAttemptAt: 1000,
      replays: 0,
      runs: [
        { trigger: 'a', runId: 'run-acme-a', input: { steps: 1 }, estimatedTokens: 10, status: 'pending' },
        { trigger: 'b', status: 'pending' },
      ],
    });
    const again = await ev.record(newEvent('e1', 2000), runsFor);
    expect(again).toEqual({ created: false, event: first.event });
    expect(seen).toHaveLength(1); // the known event did not consult the triggers again
    // All runs settled at once (e.g. invalid input): the event is settled and never due.
    const settled = await ev.record(newEvent('e2', 1000), () => [run('a', 'invalid_input')]);
    expect(settled.event.state).toBe('settled');
    expect(await ev.due(5000, 10)).toEqual([{ tenant: 'acme', eventId: 'e1' }]);
    expect((await ev.list('acme', 10_000, 10)).map((e) => e.eventId).sort()).toEqual(['e1', 'e2']);
    expect(await ev.list('acme', 1000, 10)).toEqual([]);
    expect(await ev.deleteTrigger('acme', 'b')).toBe(true);
    expect(await ev.deleteTrigger('acme', 'b')).toBe(false);
    expect((await ev.listTriggers('acme')).map((t) => t.name)).toEqual(['a']);
  });

  it.skipIf(engine.skip)(
    'claims an event for one dispatcher at a time, then finishes and reopens it',
    async () => {
      const ev = store.events;
      await ev.record(newEvent('e1', 1000), () => [run('a')]);
      expect(await ev.claim('acme', 'e1', 1000, 15_000)).toBe(true);
      expect(await ev.claim('acme', 'e1', 2000, 15_000)).toBe(false); // held
      expect(await ev.due(2000, 10)).toEqual([]);
      expect(await ev.claim('acme', 'e1', 16_000, 15_000)).toBe(true); // the holder died: taken over
      await ev.updateRun(
        'acme',
        'e1',
        'a',
        'refused',
        { code: 'queue_full', message: 'm', retryAfterSeconds: 3 },
        17_000,
      );
      await ev.finish('acme', 'e1', 'pending', 1, 20_000);
      expect(await ev.claim('acme', 'e1', 19_000, 15_000)).toBe(false); // not due yet
      expect(await ev.claim('acme', 'e1', 19_000, 15_000, true)).toBe(true); // forced
      await ev.updateRun('acme', 'e1', 'a', 'started', null, 19_500);
      await ev.finish('acme', 'e1', 'settled', 2, 19_500);
      expect(await ev.claim('acme', 'e1', 99_000, 15_000, true)).toBe(false); // settled
      expect(await ev.get('acme', 'e1')).toMatchObject({
        state: 'settled',
        attempts: 2,
        runs: [{ trigger: 'a', status: 'started', refusal: null, updatedAt: 19_500 }],
      });
      await ev.reopen('acme', 'e1', [run('b')], 30_000);
      expect(await ev.get('acme', 'e1')).toMatchObject({
        state: 'pending',
        attempts: 0,
        nextAttemptAt: 30_000,
        replays: 1,
        runs: [
          { trigger: 'a', status: 'started' },
          { trigger: 'b', status: 'pending' },
        ],
      });
    },
  );

  it.skipIf(engine.skip)('lets exactly one of two stores sharing a location claim an event', async () => {
    const location = await engine.location();
    const [a, b] = [await openAt(location), await openAt(location)];
    await a.events.record(newEvent('e1', 1000), () => [run('a')]);
    const wins = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).events.claim('acme', 'e1', 2000, 15_000)),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it.skipIf(engine.skip)(
    'keeps webhook secrets per source, and prunes settled events past retention',
    async () => {
      const ev = store.events;
      expect(await ev.secretFor('acme', 'shop')).toBeUndefined();
      await ev.putSecret('acme', 'shop', 's1', 1);
      await ev.putSecret('acme', 'shop', 's2', 2);
      await ev.putSecret('acme', 'crm', 's3', 3);
      expect(await ev.secretFor('acme', 'shop')).toBe('s2');
      expect(await ev.listSecrets('acme')).toEqual([
        { source: 'crm', createdAt: 3 },
        { source: 'shop', createdAt: 2 },
      ]);
      expect(await ev.deleteSecret('acme', 'crm')).toBe(true);
      expect(await ev.deleteSecret('acme', 'crm')).toBe(false);

      await ev.record(newEvent('old-settled', 1000), () => [run('a', 'invalid_input')]);
      await ev.record(newEvent('old-pending', 1000), () => [run('b')]);
      await ev.record(newEvent('new', 1000 + EVENT_RETENTION_MS), () => []);
      expect(await ev.prune(1000 + EVENT_RETENTION_MS + 1)).toBe(1);
      expect(await ev.get('acme', 'old-settled')).toBeUndefined();
      expect(await ev.get('acme', 'old-pending')).toBeDefined();
      // A pruned id is new again.
      expect((await ev.record(newEvent('old-settled', 5000 + EVENT_RETENTION_MS), () => [])).created).toBe(
        true,
      );
    },
  );
});

describe('SQLite API store file', () => {
  it('creates its directory and uses WAL', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-store-'));
    const file = join(dir, 'a', 'b', 'api.sqlite');
    const store = openSqliteStore(file);
    expect(existsSync(file)).toBe(true);
    await store.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('canonical JSON', () => {
  it('ignores key order and undefined, keeps array order and __proto__ keys', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined } })).toBe('{"a":{"d":[2,1]},"b":1}');
    expect(canonicalHash(JSON.parse('{"__proto__":{"x":1}}'))).not.toBe(canonicalHash({}));
  });
});

describe('SharedBuckets', () => {
  it('allows a burst, then refills at the rate and says when', async () => {
    let now = 0;
    const db = openSqliteStore(':memory:');
    const buckets = (rate: number, burst: number) =>
      new SharedBuckets(db.rateLimits, 'submit', rate, burst, () => now);
    const b = buckets(2, 4);
    for (let i = 0; i < 4; i++) expect((await b.take('a')).ok).toBe(true);
    expect(await b.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect((await b.take('b')).ok).toBe(true);
    now += 500;
    expect((await b.take('a')).ok).toBe(true);
    expect((await b.take('a')).ok).toBe(false);
    const slow = new SharedBuckets(db.rateLimits, 'slow', 0.1, 1, () => now);
    await slow.take('a');
    expect(await slow.take('a')).toEqual({ ok: false, retryAfterSeconds: 10 });
    expect((await buckets(0, 0).take('a')).ok).toBe(true);
    await db.close();
  });
});

describe('SQLite store migrations', () => {
  it('migrates a schema-2 store: its tenants gain onBudgetExhausted "fail", and may set "park"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fairway-store-v2-'));
    const file = join(dir, 'v2.sqlite');
    const raw = new Database(file);
    raw.exec(`CREATE TABLE tenants (id TEXT PRIMARY KEY, weight REAL NOT NULL, max_queued INTEGER NOT NULL,
      max_in_flight INTEGER NOT NULL, budget_tokens INTEGER, budget_period TEXT NOT NULL,
      key_hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      INSERT INTO tenants VALUES ('old', 1, 5, 2, 100, 'day', 'h-old', 1000, 1000);
      PRAGMA user_version = 2;`);
    raw.close();
    const migrated = openSqliteStore(file);
    try {
      expect((await migrated.tenants.get('old'))?.settings).toEqual({
        weight: 1,
        maxQueued: 5,
        maxInFlight: 2,
        budget: { tokens: 100, period: 'day' },
        onBudgetExhausted: 'fail',
      });
      const settings2 = { ...settings, onBudgetExhausted: 'park' as const };
      expect(await migrated.tenants.update('old', settings2, 2000)).toBe(true);
      expect((await migrated.tenants.get('old'))?.settings.onBudgetExhausted).toBe('park');
    } finally {
      await migrated.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('migrates a schema-7 store: its tenants gain key_weights (none set), and may set them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fairway-store-v7-'));
    const file = join(dir, 'v7.sqlite');
    const raw = new Database(file);
    raw.exec(`CREATE TABLE tenants (id TEXT PRIMARY KEY, weight REAL NOT NULL, max_queued INTEGER NOT NULL,
      max_in_flight INTEGER NOT NULL, budget_tokens INTEGER, budget_period TEXT NOT NULL,
      on_budget_exhausted TEXT NOT NULL DEFAULT 'fail', disabled_at INTEGER,
      key_hash TEXT NOT NULL UNIQUE, approver_key_hash TEXT UNIQUE,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      INSERT INTO tenants (id, weight, max_queued, max_in_flight, budget_tokens, budget_period, key_hash,
        created_at, updated_at) VALUES ('old', 1, 5, 2, NULL, 'none', 'h-old', 1000, 1000);
      PRAGMA user_version = 7;`);
    raw.close();
    const migrated = openSqliteStore(file);
    try {
      expect((await migrated.tenants.get('old'))?.settings).toEqual(settings);
      expect(await migrated.tenants.update('old', { ...settings, keyWeights: { u: 2 } }, 2000)).toBe(true);
      expect((await migrated.tenants.get('old'))?.settings.keyWeights).toEqual({ u: 2 });
    } finally {
      await migrated.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('migrates a schema-8 store: event runs gain fairness_key (none set), and keep new ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fairway-store-v8-'));
    const file = join(dir, 'v8.sqlite');
    const raw = new Database(file);
    raw.exec(`CREATE TABLE event_runs (tenant TEXT NOT NULL, event_id TEXT NOT NULL, trigger TEXT NOT NULL,
      run_id TEXT NOT NULL, agent TEXT NOT NULL, priority TEXT NOT NULL, input TEXT NOT NULL,
      estimated_tokens INTEGER NOT NULL, status TEXT NOT NULL, refusal TEXT, updated_at INTEGER NOT NULL,
      PRIMARY KEY (tenant, event_id, trigger));
      PRAGMA user_version = 8;`);
    raw.close();
    const migrated = openSqliteStore(file);
    try {
      await migrated.events.record(newEvent('e1', 1000), () => [{ ...run('a'), fairnessKey: 'user-1' }]);
      expect((await migrated.events.get('acme', 'e1'))?.runs[0]?.fairnessKey).toBe('user-1');
    } finally {
      await migrated.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type ApiStore } from '../../../src/api/stores/store';
import { canonicalHash, canonicalJson } from '../../../src/api/crypto/canonical-json';
import { IDEMPOTENCY_RETENTION_MS, PENDING_CLAIM_TTL_MS } from '../../../src/api/stores/idempotency';
import { TokenBuckets } from '../../../src/api/intake/token-buckets';

const settings = {
  weight: 1,
  maxQueued: 5,
  maxInFlight: 2,
  budget: { tokens: null, period: 'none' as const },
  onBudgetExhausted: 'fail' as const,
};

describe('openStore', () => {
  let dir: string;
  let store: ApiStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-store-'));
    store = openStore(join(dir, 'a', 'b', 'api.sqlite'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates its directory, uses WAL, and survives a reopen', () => {
    const file = join(dir, 'a', 'b', 'api.sqlite');
    expect(existsSync(file)).toBe(true);
    store.tenants.create('acme', settings, 'hash-1', 1000);
    store.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    store = openStore(file);
    expect(store.listTenants()).toEqual([
      {
        tenant: 'acme',
        settings,
        createdAt: '1970-01-01T00:00:01.000Z',
        updatedAt: '1970-01-01T00:00:01.000Z',
      },
    ]);
  });

  it('migrates a schema-2 store: its tenants gain onBudgetExhausted "fail", and may set "park"', () => {
    const file = join(dir, 'v2.sqlite');
    const raw = new Database(file);
    raw.exec(`CREATE TABLE tenants (id TEXT PRIMARY KEY, weight REAL NOT NULL, max_queued INTEGER NOT NULL,
      max_in_flight INTEGER NOT NULL, budget_tokens INTEGER, budget_period TEXT NOT NULL,
      key_hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      INSERT INTO tenants VALUES ('old', 1, 5, 2, 100, 'day', 'h-old', 1000, 1000);
      PRAGMA user_version = 2;`);
    raw.close();
    const migrated = openStore(file);
    try {
      expect(migrated.tenants.get('old')?.settings).toEqual({
        weight: 1,
        maxQueued: 5,
        maxInFlight: 2,
        budget: { tokens: 100, period: 'day' },
        onBudgetExhausted: 'fail',
      });
      const settings2 = { ...settings, onBudgetExhausted: 'park' as const };
      expect(migrated.tenants.update('old', settings2, 2000)).toBe(true);
      expect(migrated.tenants.get('old')?.settings.onBudgetExhausted).toBe('park');
    } finally {
      migrated.close();
    }
  });

  it('finds tenants by key hash; creation does not overwrite, rotation replaces the hash', () => {
    expect(store.tenants.create('acme', settings, 'h1', 1)).toBe(true);
    expect(store.tenants.create('acme', { ...settings, weight: 9 }, 'h2', 2)).toBe(false);
    expect(store.tenants.findByKeyHash('h1')?.settings.weight).toBe(1);
    expect(store.tenants.setKeyHash('acme', 'h3', 3)).toBe(true);
    expect(store.tenants.findByKeyHash('h1')).toBeUndefined();
    expect(store.tenants.findByKeyHash('h3')?.tenant).toBe('acme');
    expect(store.tenants.setKeyHash('ghost', 'h4', 3)).toBe(false);
  });

  it('claims an idempotency key once; release removes a pending claim; stale claims are taken over', () => {
    const idem = store.idempotency;
    const rec = { tenant: 't', key: 'k', bodyHash: 'b', runId: 'run-t-1', createdAt: 10_000 };
    expect(idem.claim(rec)).toMatchObject({ claimed: true });
    expect(idem.claim({ ...rec, createdAt: 10_001 })).toMatchObject({
      claimed: false,
      existing: { state: 'pending' },
    });
    idem.release('t', 'k');
    expect(idem.count()).toBe(0);
    expect(idem.claim(rec)).toMatchObject({ claimed: true });
    expect(idem.claim({ ...rec, createdAt: 10_000 + PENDING_CLAIM_TTL_MS + 1 })).toMatchObject({
      claimed: true,
    });
    idem.complete('t', 'k');
    idem.release('t', 'k'); // a done record is never released
    expect(idem.find('t', 'k')?.state).toBe('done');
    const later = 10_000 + PENDING_CLAIM_TTL_MS + 1 + IDEMPOTENCY_RETENTION_MS + 1;
    expect(idem.prune(later)).toBe(1);
  });
});

describe('canonical JSON', () => {
  it('ignores key order and undefined, keeps array order and __proto__ keys', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined } })).toBe('{"a":{"d":[2,1]},"b":1}');
    expect(canonicalHash(JSON.parse('{"__proto__":{"x":1}}'))).not.toBe(canonicalHash({}));
  });
});

describe('TokenBuckets', () => {
  it('allows a burst, then refills at the rate and says when', () => {
    let now = 0;
    const buckets = new TokenBuckets(2, 4, () => now);
    for (let i = 0; i < 4; i++) expect(buckets.take('a').ok).toBe(true);
    expect(buckets.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(buckets.take('b').ok).toBe(true);
    now += 500;
    expect(buckets.take('a').ok).toBe(true);
    expect(buckets.take('a').ok).toBe(false);
    const slow = new TokenBuckets(0.1, 1, () => now);
    slow.take('a');
    expect(slow.take('a')).toEqual({ ok: false, retryAfterSeconds: 10 });
    expect(new TokenBuckets(0, 0, () => now).take('a').ok).toBe(true);
  });
});

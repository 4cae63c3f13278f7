import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import { openEffectStore } from '../../../src/stores/open';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';
import type { StoreEngine } from '../../support/store-engines';

/** The same tests against both implementations: a SQLite file and a PostgreSQL database. */
interface Engine extends StoreEngine {
  /** Inserts a raw "applied" attempt row behind the store's back. */
  tamper(location: string, key: string): Promise<void>;
}

let dir: string;
const sqlite: Engine = {
  ...sqliteEngine('effects.db', () => dir),
  async tamper(file, key) {
    const raw = new Database(file);
    raw.prepare('INSERT INTO attempts (key, applied, at) VALUES (?, 1, 0)').run(key);
    raw.close();
  },
};

const postgres: Engine = {
  ...postgresEngine(),
  async tamper(url, key) {
    const c = new PgClient({ connectionString: url });
    await c.connect();
    await c.query('INSERT INTO attempts (key, applied, at) VALUES ($1, 1, 0)', [key]);
    await c.end();
  },
};

describe.each([sqlite, postgres])('effect store ($name)', (engine) => {
  const open: EffectStore[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-effects-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function store(location?: string): Promise<EffectStore> {
    const s = await openEffectStore(location ?? (await engine.location()));
    open.push(s);
    return s;
  }

  it.skipIf(engine.skip)(
    'applies a key once however often it is attempted, and counts every attempt',
    async () => {
      const s = await store();
      expect(await s.apply('run-a-1/effect', { n: 1 })).toEqual({ applied: true, delivered: false });
      expect(await s.apply('run-a-1/effect', { n: 1 })).toEqual({ applied: false, delivered: false });
      expect(await s.apply('run-a-1/effect', { n: 2 })).toEqual({ applied: false, delivered: false });
      expect(await s.apply('run-b-1/effect', {})).toEqual({ applied: true, delivered: false });
      expect(await s.summary()).toEqual({ effects: 2, attempts: 4, duplicates: 0 });
    },
  );

  it.skipIf(engine.skip)('remembers a confirmed delivery, once', async () => {
    const s = await store();
    await s.apply('k', {});
    expect(await s.delivery('k')).toEqual({ delivered: false });
    await s.markDelivered('k', '"first"');
    await s.markDelivered('k');
    // Read without logging an attempt: the summary counts the two applies only.
    expect(await s.delivery('k')).toEqual({ delivered: true, result: '"first"' });
    expect(await s.delivery('unknown')).toEqual({ delivered: false });
    expect((await s.summary()).attempts).toBe(1);
    expect(await s.apply('k', {})).toEqual({ applied: false, delivered: true, result: '"first"' });
    expect((await s.summary()).attempts).toBe(2);
    await s.markDelivered('never-applied');
    expect(await s.apply('never-applied', {})).toEqual({ applied: true, delivered: false });
  });

  it.skipIf(engine.skip)(
    'lets one attempt at a time hold an undelivered effect until its hold lapses',
    async () => {
      const s = await store();
      await s.apply('k', {});
      expect(await s.hold('k', 'a#1', 1_000, 0)).toBe('held');
      expect(await s.hold('k', 'a#2', 1_500, 500)).toBe('busy');
      // Renewed by its holder; taken by another once it lapsed.
      expect(await s.hold('k', 'a#1', 2_000, 900)).toBe('held');
      expect(await s.hold('k', 'a#2', 2_500, 1_999)).toBe('busy');
      expect(await s.hold('k', 'a#2', 3_000, 2_001)).toBe('held');
      expect(await s.hold('k', 'a#1', 3_000, 2_002)).toBe('busy');
      // Released only by its holder.
      await s.release('k', 'a#1');
      expect(await s.hold('k', 'a#3', 3_000, 2_003)).toBe('busy');
      await s.release('k', 'a#2');
      expect(await s.hold('k', 'a#3', 3_000, 2_004)).toBe('held');
      await s.markDelivered('k', '1');
      expect(await s.hold('k', 'a#3', 4_000, 2_005)).toBe('delivered');
      expect(await s.hold('k', 'a#4', 4_000, 9_999)).toBe('delivered');
    },
  );

  it.skipIf(engine.skip)("keeps the first delivery's result, across reopening", async () => {
    const location = await engine.location();
    const first = await openEffectStore(location);
    await first.apply('r', {});
    await first.markDelivered('r', '{"id":1,"text":"é"}');
    await first.markDelivered('r', '{"id":2}');
    await first.close();
    const again = await store(location);
    expect(await again.apply('r', {})).toEqual({
      applied: false,
      delivered: true,
      result: '{"id":1,"text":"é"}',
    });
    await again.apply('none', {});
    await again.markDelivered('none');
    expect(await again.apply('none', {})).toEqual({ applied: false, delivered: true });
  });

  it.skipIf(engine.skip)('keeps effects across reopening', async () => {
    const location = await engine.location();
    const first = await openEffectStore(location);
    await first.apply('k', {});
    await first.close();
    const again = await store(location);
    expect(await again.apply('k', {})).toEqual({ applied: false, delivered: false });
    expect(await again.summary()).toEqual({ effects: 1, attempts: 2, duplicates: 0 });
  });

  it.skipIf(engine.skip)(
    'shares one location between two store instances without applying a key twice',
    async () => {
      const location = await engine.location();
      const [a, b] = await Promise.all([store(location), store(location)]);
      expect((await a.apply('k1', {})).applied).toBe(true);
      expect((await b.apply('k1', {})).applied).toBe(false);
      expect((await b.apply('k2', {})).applied).toBe(true);
      expect((await a.apply('k2', {})).applied).toBe(false);
      expect(await a.summary()).toEqual({ effects: 2, attempts: 4, duplicates: 0 });
      expect(await b.summary()).toEqual(await a.summary());
    },
  );

  it.skipIf(engine.skip)('stays exactly-once when two processes race on the same keys', async () => {
    const location = await engine.location();
    await (await store(location)).summary(); // schema in place before the race
    const child = join(__dirname, 'effect-store-child.ts');
    const startAt = String(Date.now() + 2500);
    const run = () =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', child, location, '300', startAt]);
    const [x, y] = await Promise.all([run(), run()]);
    expect(Number(x.stdout) + Number(y.stdout)).toBe(300);
    expect(await (await store(location)).summary()).toEqual({ effects: 300, attempts: 600, duplicates: 0 });
  });

  it.skipIf(engine.skip)('reports duplicates honestly when the log shows a key applied twice', async () => {
    const location = await engine.location();
    const s = await store(location);
    await s.apply('k', {});
    await engine.tamper(location, 'k');
    expect(await s.summary()).toEqual({ effects: 1, attempts: 2, duplicates: 1 });
  });
});

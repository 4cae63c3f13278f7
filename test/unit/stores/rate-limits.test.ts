import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiStore } from '../../../src/stores/api/api-store';
import { openStore } from '../../../src/stores/open';
import { schedulerSettings } from '../../../src/stores/tenants/tenants';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

let dir: string;
const engines = [sqliteEngine('api.sqlite', () => dir), postgresEngine()];
const rule = { ratePerSecond: 2, burst: 4 };
const settings = {
  weight: 1,
  maxQueued: 5,
  maxInFlight: 3,
  budget: { tokens: null, period: 'none' as const },
  onBudgetExhausted: 'fail' as const,
};

describe.each(engines)('shared rate buckets and tenant disable ($name)', (engine) => {
  const open: ApiStore[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-rate-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two stores on one location, as two API processes open it. */
  async function twoStores(): Promise<[ApiStore, ApiStore]> {
    const location = await engine.location();
    const a = await openStore(location);
    const b = await openStore(location);
    open.push(a, b);
    return [a, b];
  }

  it.skipIf(engine.skip)('two stores on one location draw on one bucket, also when racing', async () => {
    const [a, b] = await twoStores();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).rateLimits.take('request:acme', 1, rule, 1000)),
    );
    expect(answers.filter((r) => r.ok)).toHaveLength(4);
    expect(answers.find((r) => !r.ok)).toEqual({ ok: false, retryAfterSeconds: 1 });
    // Another key has its own bucket; half a second later the shared one holds one token again.
    expect((await a.rateLimits.take('request:other', 1, rule, 1000)).ok).toBe(true);
    expect((await b.rateLimits.take('request:acme', 1, rule, 1500)).ok).toBe(true);
    expect((await a.rateLimits.take('request:acme', 1, rule, 1500)).ok).toBe(false);
  });

  it.skipIf(engine.skip)(
    'peek charges nothing; charge goes into debt that later takes wait out',
    async () => {
      const [a, b] = await twoStores();
      for (let i = 0; i < 10; i++)
        expect((await a.rateLimits.take('submit:acme', 1, rule, 0, 'peek')).ok).toBe(true);
      expect((await a.rateLimits.take('submit:acme', 10, rule, 0, 'charge')).ok).toBe(true);
      // 4 - 10 = -6 tokens: a peek and a take are refused for (1 + 6) / 2 = 3.5 s.
      expect(await b.rateLimits.take('submit:acme', 1, rule, 0, 'peek')).toEqual({
        ok: false,
        retryAfterSeconds: 4,
      });
      expect((await b.rateLimits.take('submit:acme', 1, rule, 3000)).ok).toBe(false);
      expect((await b.rateLimits.take('submit:acme', 1, rule, 3500)).ok).toBe(true);
    },
  );

  it.skipIf(engine.skip)(
    'disables and enables a tenant, seen by every store; the scheduler holds it at 0',
    async () => {
      const [a, b] = await twoStores();
      await a.tenants.create('acme', settings, 'h', 1000);
      expect((await b.tenants.get('acme'))?.disabled).toBe(false);
      expect(await a.tenants.setDisabled('acme', true, 2000)).toBe(true);
      const off = (await b.tenants.findByKeyHash('h'))!;
      expect(off.disabled).toBe(true);
      expect(off.settings.maxInFlight).toBe(3);
      expect(schedulerSettings(off)).toEqual({ ...settings, maxInFlight: 0 });
      expect(await a.tenants.setDisabled('acme', false, 3000)).toBe(true);
      const on = (await b.tenants.get('acme'))!;
      expect(on.disabled).toBe(false);
      expect(schedulerSettings(on)).toEqual(settings);
      expect(await a.tenants.setDisabled('nobody', true, 3000)).toBe(false);
    },
  );
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CallCharges } from '../../../src/activities/call-charges';
import type { CallIntentStore } from '../../../src/stores/call-intents/call-intents';
import { openCallIntents } from '../../../src/stores/open';
import type { Charge } from '../../../src/scheduler';
import type { UsageSource } from '../../../src/activities/usage-source';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

/**
 * The sweep that charges a dead worker's calls, over a real store (SQLite and PostgreSQL). Each
 * worker's mailbox here records what it was asked to charge, and "delivers" on demand (hands the
 * keys back, as the real mailbox does once its report signal succeeded).
 */
let dir: string;
const engines = [sqliteEngine('call-intents.db', () => dir), postgresEngine()];
const TIMING = { ownerDeadMs: 30_000, sweepMs: 10_000, keepSettledMs: 60_000 };
const log = pino({ level: 'silent' });

describe.each(engines)('call charges sweep ($name)', (engine) => {
  const open: CallIntentStore[] = [];
  const workers: CallCharges[] = [];
  let now = 1_000_000;
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-call-charges-'));
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A worker process: its own store connection, mailbox and owner id, on the shared location. */
  async function worker(location: string, usage?: UsageSource) {
    const store = await openCallIntents(location);
    open.push(store);
    const charged: { charge: Charge; keys: readonly string[] }[] = [];
    const confirmed: string[] = [];
    const fenced: string[] = [];
    const mailbox = {
      charge: (charge: Charge) =>
        charged.push({ charge, keys: charge.key === undefined ? [] : [charge.key] }),
      confirm: (ids: readonly string[]) => void confirmed.push(...ids),
      fence: (ids: readonly string[]) => void fenced.push(...ids),
    };
    const w = new CallCharges(store, mailbox, TIMING, log, () => now, usage);
    workers.push(w);
    const deliver = async () => {
      w.settled(charged.map((c) => c.charge));
      await w.close(); // waits for the settle write
    };
    return { w, store, charged, confirmed, fenced, deliver };
  }
  const call = (runId: string, reserved: number) => ({ tenant: 't', runId, attempt: 1, step: 1, reserved });
  const tokens = (cs: { charge: Charge }[]) => cs.map((c) => c.charge.tokens).sort((a, b) => a - b);

  it.skipIf(engine.skip)(
    "charges a dead worker's billed calls their bill, its cut calls their reservation, its delivered calls nothing",
    async () => {
      const location = await engine.location();
      const a = await worker(location);
      await a.store.beat(a.w.owner, now);
      const billed = await a.w.begin(call('run-1', 100));
      await a.w.billed(billed, { tenant: 't', runId: 'run-1', attempt: 1, tokens: 90 });
      await a.w.begin(call('run-2', 120)); // cut: the worker died before the bill came
      const delivered = await a.w.begin(call('run-3', 50));
      await a.w.billed(delivered, { tenant: 't', runId: 'run-3', attempt: 1, tokens: 50 });
      a.w.settled([{ tenant: 't', runId: 'run-3', attempt: 1, tokens: 50, key: delivered }]);
      await a.w.close();
      // SIGKILL: a's mailbox (holding run-1's charge) is gone. b starts within the dead time: nothing.
      const b = await worker(location);
      now += TIMING.ownerDeadMs - 1;
      expect(await b.w.sweep()).toBe(0);
      now += 2;
      expect(await b.w.sweep()).toBe(2);
      expect(tokens(b.charged)).toEqual([90, 120]);
      expect(b.charged.every((c) => c.keys.length === 1 && c.charge.tenant === 't')).toBe(true);
      // Delivered, they are settled: no sweep (of b, or of c once b is dead too) charges them again.
      await b.deliver();
      now += TIMING.ownerDeadMs * 2;
      const c = await worker(location);
      expect(await c.w.sweep()).toBe(0);
      expect((await c.store.counts()).unsettled).toBe(0);
    },
  );

  it.skipIf(engine.skip)('never takes the rows of a worker that keeps beating', async () => {
    const location = await engine.location();
    const a = await worker(location);
    for (let i = 0; i < 5; i++) await a.w.begin(call(`run-${i}`, 10));
    const b = await worker(location);
    for (let i = 0; i < 4; i++) {
      await a.store.beat(a.w.owner, now);
      now += TIMING.ownerDeadMs / 2;
      expect(await b.w.sweep()).toBe(0);
    }
    expect(b.charged).toEqual([]);
  });

  it.skipIf(engine.skip)('two sweepers charge each dead call once between them', async () => {
    const location = await engine.location();
    const a = await worker(location);
    for (let i = 0; i < 1200; i++) await a.w.begin(call(`run-${i}`, 1 + (i % 7)));
    now += TIMING.ownerDeadMs + 1;
    const [b, c] = await Promise.all([worker(location), worker(location)]);
    const [nb, nc] = await Promise.all([b.w.sweep(), c.w.sweep()]);
    expect(nb + nc).toBe(1200);
    const keys = [...b.charged, ...c.charged].flatMap((x) => x.keys);
    expect(new Set(keys).size).toBe(1200);
    const sum = (cs: { charge: Charge }[]) => cs.reduce((s, x) => s + x.charge.tokens, 0);
    expect(sum(b.charged) + sum(c.charged)).toBe(
      Array.from({ length: 1200 }, (_, i) => 1 + (i % 7)).reduce((s, x) => s + x, 0),
    );
  });

  it.skipIf(engine.skip)('stays bounded: settled rows are deleted once kept long enough', async () => {
    const location = await engine.location();
    const a = await worker(location);
    for (let i = 0; i < 20; i++) {
      const key = await a.w.begin(call(`run-${i}`, 10));
      await a.w.billed(key, { tenant: 't', runId: `run-${i}`, attempt: 1, tokens: 10 });
    }
    await a.deliver();
    expect(await a.store.counts()).toEqual({ rows: 20, unsettled: 0 });
    const b = await worker(location);
    now += TIMING.keepSettledMs - 1;
    await b.w.sweep();
    expect(await b.store.counts()).toEqual({ rows: 20, unsettled: 0 });
    now += 2;
    await b.w.sweep();
    expect(await b.store.counts()).toEqual({ rows: 0, unsettled: 0 });
    expect(b.charged).toEqual([]);
  });

  it.skipIf(engine.skip)(
    "settles provisional charges against the provider's report, once, also across the reconciler's death",
    async () => {
      const location = await engine.location();
      const served = new Map<string, number | null>();
      const usage: UsageSource = {
        lookup: async (id) => {
          if (!served.has(id)) return { served: false };
          const t = served.get(id);
          return t === null || t === undefined ? null : { served: true, tokens: t };
        },
      };
      const a = await worker(location, usage);
      await a.store.beat(a.w.owner, now);
      const cut = await a.w.begin(call('run-1', 100)); // the provider served it for 60
      await a.w.uncertain(cut, { tenant: 't', runId: 'run-1', attempt: 1, tokens: 100 });
      const dropped = await a.w.begin(call('run-2', 120)); // never served
      await a.w.uncertain(dropped, { tenant: 't', runId: 'run-2', attempt: 1, tokens: 120 });
      const unknown = await a.w.begin(call('run-3', 30)); // the lookup cannot tell yet
      await a.w.uncertain(unknown, { tenant: 't', runId: 'run-3', attempt: 1, tokens: 30 });
      served.set(cut, 60);
      served.set(unknown, null);
      // Not delivered yet: nothing to correct.
      expect(await a.w.reconcile()).toBe(0);
      a.w.settled(a.charged.map((c) => c.charge));
      await a.w.close();
      expect(a.confirmed).toHaveLength(3);
      a.charged.length = 0;
      now += 1;
      expect(await a.w.reconcile()).toBe(2);
      expect(a.charged.map((c) => [c.charge.runId, c.charge.tokens, c.charge.correction])).toEqual([
        ['run-1', -40, true],
        ['run-2', -120, true],
      ]);
      // On their way: not looked up again meanwhile.
      expect(await a.w.reconcile()).toBe(0);
      // a dies before it marks them corrected: b takes its rows and corrects them again, under the
      // same keys (the scheduler books each key's correction once).
      now += TIMING.ownerDeadMs + 1;
      const b = await worker(location, usage);
      expect(await b.w.sweep()).toBe(0); // settled already: nothing is charged
      served.set(unknown, 30);
      expect(await b.w.reconcile()).toBe(3);
      const corrections = b.charged.filter((c) => c.charge.correction === true);
      expect(corrections.map((c) => c.charge.key).sort()).toEqual(
        [cut, dropped].sort(), // the third was billed what it was charged: nothing to send
      );
      await b.deliver();
      expect(b.confirmed).toHaveLength(3);
      now += TIMING.ownerDeadMs * 2;
      const c = await worker(location, usage);
      await c.w.sweep();
      expect(await c.w.reconcile()).toBe(0);
    },
  );
});

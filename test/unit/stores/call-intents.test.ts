import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CallIntent, CallIntentStore } from '../../../src/stores/call-intents/call-intents';
import { openCallIntents } from '../../../src/stores/open';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

/** The call intent store, the same tests against a SQLite file and a PostgreSQL database. */
let dir: string;
const engines = [sqliteEngine('call-intents.db', () => dir), postgresEngine()];

const intent = (key: string, owner: string, reserved = 100): CallIntent => ({
  key,
  tenant: 't',
  runId: `run-t-${key}`,
  attempt: 0,
  reserved,
  owner,
});

describe.each(engines)('call intent store ($name)', (engine) => {
  const open: CallIntentStore[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-call-intents-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  async function store(location?: string): Promise<CallIntentStore> {
    const s = await openCallIntents(location ?? (await engine.location()));
    open.push(s);
    return s;
  }

  it.skipIf(engine.skip)(
    'records calls, their bills, drops refused ones, settles delivered ones',
    async () => {
      const s = await store();
      await s.begin(intent('a', 'w1'), 1);
      await s.begin(intent('b', 'w1'), 1);
      await s.begin(intent('c', 'w1'), 1);
      await expect(s.begin(intent('a', 'w1'), 2)).rejects.toThrow(); // a key is one call
      await s.billed('a', 90);
      await s.drop('b');
      await s.settle(['a'], 5);
      await s.drop('a'); // a settled row is never dropped
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 1 });
    },
  );

  it.skipIf(engine.skip)(
    "finds one call key's recorded calls, with their bills, and no other key's",
    async () => {
      const s = await store();
      const at = (key: string, runId: string, attempt: number): CallIntent => ({
        ...intent(key, 'w1', 100),
        runId,
        attempt,
      });
      const run = 'run-t_%-1';
      await s.begin(at(`${run}/0/1/a`, run, 0), 1);
      await s.begin(at(`${run}/0/1/b`, run, 0), 2);
      await s.begin(at(`${run}/0/1/c`, run, 0), 3);
      await s.begin(at(`${run}/0/12/a`, run, 0), 1); // another step
      await s.begin(at(`${run}/1/1/a`, run, 1), 1); // another attempt
      await s.begin(at(`run-t_%-10/0/1/a`, 'run-t_%-10', 0), 1); // another run
      await s.billed(`${run}/0/1/b`, 42);
      await s.drop(`${run}/0/1/c`); // refused: billed nothing
      await s.settle([`${run}/0/1/b`], 5);
      expect(await s.callsOf(run, 0, `${run}/0/1/`)).toEqual([
        { key: `${run}/0/1/a`, reserved: 100, tokens: null },
        { key: `${run}/0/1/b`, reserved: 100, tokens: 42 },
      ]);
      expect(await s.callsOf(run, 2, `${run}/2/1/`)).toEqual([]);
    },
  );

  it.skipIf(engine.skip)(
    "takes a dead owner's unsettled rows once, never a live owner's, never settled ones",
    async () => {
      const s = await store();
      await s.beat('dead', 1_000);
      await s.beat('live', 50_000);
      await s.begin(intent('d1', 'dead', 100), 1_000);
      await s.begin(intent('d2', 'dead', 200), 1_000);
      await s.begin(intent('d3', 'dead'), 1_000);
      await s.begin(intent('l1', 'live'), 1_000);
      await s.begin(intent('n1', 'never-seen', 300), 1_000);
      await s.billed('d1', 42);
      await s.settle(['d3'], 2_000);
      await s.beat('sweeper', 50_000);
      const taken = await s.claimOrphans('sweeper', 20_000, 100);
      expect(taken.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: 'd1', tenant: 't', runId: 'run-t-d1', attempt: 0, reserved: 100, tokens: 42, settled: false },
        {
          key: 'd2',
          tenant: 't',
          runId: 'run-t-d2',
          attempt: 0,
          reserved: 200,
          tokens: null,
          settled: false,
        },
        {
          key: 'n1',
          tenant: 't',
          runId: 'run-t-n1',
          attempt: 0,
          reserved: 300,
          tokens: null,
          settled: false,
        },
      ]);
      // Taken rows are the sweeper's now (alive): a second sweeper finds nothing.
      await s.beat('other', 50_000);
      expect(await s.claimOrphans('other', 20_000, 100)).toEqual([]);
      // The sweeper dies in turn: its rows go to the next one; the live owner's row still never does.
      await s.beat('live', 70_000);
      expect((await s.claimOrphans('other', 60_000, 100)).map((r) => r.key).sort()).toEqual([
        'd1',
        'd2',
        'n1',
      ]);
    },
  );

  it.skipIf(engine.skip)('two sweepers racing on one location never take a row twice', async () => {
    const location = await engine.location();
    const [a, b] = await Promise.all([store(location), store(location)]);
    for (let i = 0; i < 300; i++) await a.begin(intent(`k${i}`, 'dead'), 1);
    await a.beat('a', 100);
    await b.beat('b', 100);
    const drain = async (s: CallIntentStore, owner: string) => {
      const keys: string[] = [];
      for (;;) {
        const rows = await s.claimOrphans(owner, 50, 7);
        if (!rows.length) return keys;
        keys.push(...rows.map((r) => r.key));
      }
    };
    const [ka, kb] = await Promise.all([drain(a, 'a'), drain(b, 'b')]);
    expect(ka.length + kb.length).toBe(300);
    expect(new Set([...ka, ...kb]).size).toBe(300);
  });

  it.skipIf(engine.skip)(
    'stays bounded: settled rows go after their keep, owners that owe nothing go once dead',
    async () => {
      const s = await store();
      await s.beat('gone', 1);
      await s.beat('owes', 1);
      for (let i = 0; i < 50; i++) await s.begin(intent(`s${i}`, 'gone'), 1);
      await s.begin(intent('open', 'owes'), 1);
      await s.settle(
        Array.from({ length: 50 }, (_, i) => `s${i}`),
        10,
      );
      await s.prune(10, 5); // settled at 10 is not before 10
      expect(await s.counts()).toEqual({ rows: 51, unsettled: 1 });
      await s.prune(11, 5);
      expect(await s.counts()).toEqual({ rows: 1, unsettled: 1 });
      // 'gone' owed nothing and was pruned: its absence reads as dead, as before. 'owes' was kept.
      await s.beat('sweeper', 100);
      expect((await s.claimOrphans('sweeper', 50, 10)).map((r) => r.key)).toEqual(['open']);
    },
  );

  it.skipIf(engine.skip)(
    'provisional charges: due for lookup once settled and old enough, taken over with a dead owner, kept until reconciled',
    async () => {
      const s = await store();
      await s.beat('w', 1_000);
      await s.begin(intent('p1', 'w', 100), 1_000); // cut: charged its reservation
      await s.begin(intent('p2', 'w', 200), 5_000);
      await s.begin(intent('b1', 'w', 50), 1_000); // billed: exact, never looked up
      await s.provisional('p1');
      await s.provisional('p2');
      await s.billed('b1', 40);
      // Not yet delivered: nothing to reconcile.
      expect(await s.dueForReconcile('w', 10_000, 10)).toEqual([]);
      await s.settle(['p1', 'p2', 'b1'], 6_000);
      expect((await s.dueForReconcile('w', 10_000, 10)).map((r) => r.key)).toEqual(['p1', 'p2']);
      expect(await s.dueForReconcile('w', 2_000, 10)).toEqual([
        { key: 'p1', tenant: 't', runId: 'run-t-p1', attempt: 0, reserved: 100 },
      ]);
      // Settled long ago: the billed row goes, the provisional ones stay until reconciled.
      await s.prune(100_000, 0);
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 0 });
      await s.reconciled(['p1'], 7_000);
      expect((await s.dueForReconcile('w', 10_000, 10)).map((r) => r.key)).toEqual(['p2']);
      // The owner dies: a sweeper takes its unreconciled row (nothing to charge: it is settled).
      await s.beat('sweeper', 200_000);
      expect(await s.claimOrphans('sweeper', 100_000, 10)).toMatchObject([{ key: 'p2', settled: true }]);
      expect(await s.dueForReconcile('w', 10_000, 10)).toEqual([]);
      expect((await s.dueForReconcile('sweeper', 10_000, 10)).map((r) => r.key)).toEqual(['p2']);
      // A dead owner's unbilled row is charged its reservation by the sweep: marked provisional.
      await s.begin(intent('c1', 'w', 70), 8_000);
      expect(await s.claimOrphans('sweeper', 100_000, 10)).toMatchObject([
        { key: 'c1', tokens: null, settled: false },
      ]);
      await s.settle(['c1'], 9_000);
      expect((await s.dueForReconcile('sweeper', 10_000, 10)).map((r) => r.key)).toEqual(['p2', 'c1']);
      await s.prune(100_000, 0); // p1, reconciled, goes
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 0 });
      // Nothing reconciles them (no usage source): they go with the rest.
      await s.prune(100_000, 0, false);
      expect(await s.counts()).toEqual({ rows: 0, unsettled: 0 });
    },
  );

  it.skipIf(engine.skip)("keeps rows across reopening (a new process finds a dead one's calls)", async () => {
    const location = await engine.location();
    const first = await openCallIntents(location);
    await first.begin(intent('x', 'dead', 70), 1);
    await first.close();
    const again = await store(location);
    await again.beat('next', 100);
    expect(await again.claimOrphans('next', 50, 10)).toMatchObject([
      { key: 'x', reserved: 70, tokens: null },
    ]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CALL_INTENTS_DDL, PROVISIONAL_COLUMNS } from '../../../src/stores/call-intents/call-intents';
import type { CallIntent, CallIntentStore, TakenOver } from '../../../src/stores/call-intents/call-intents';
import { openSqliteFile } from '../../../src/stores/engine/sqlite';
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

  /** The keys a sweep took, sorted. */
  const keysOf = (t: TakenOver) => t.calls.map((c) => c.key).sort();

  it.skipIf(engine.skip)(
    'records calls, their bills, drops refused ones, settles delivered ones',
    async () => {
      const s = await store();
      await s.join('w1', 1);
      expect(await s.begin(intent('a', 'w1'), 1)).toBe(true);
      await s.begin(intent('b', 'w1'), 1);
      await s.begin(intent('c', 'w1'), 1);
      await expect(s.begin(intent('a', 'w1'), 2)).rejects.toThrow(); // a key is one call
      expect(await s.billed('a', 'w1', 90)).toBe(true);
      await s.drop('b', 'w1');
      expect(await s.settle(['a', 'gone'], 'w1', 5)).toEqual(['a']);
      expect(await s.settle(['a'], 'w1', 6)).toEqual(['a']); // again: still its own
      await s.drop('a', 'w1'); // a settled row is never dropped
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 1 });
      // Only its owner records, drops, settles a row.
      expect(await s.billed('c', 'w2', 1)).toBe(false);
      expect(await s.provisional('c', 'w2')).toBe(false);
      await s.drop('c', 'w2');
      expect(await s.settle(['c'], 'w2', 7)).toEqual([]);
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 1 });
    },
  );

  it.skipIf(engine.skip)("records no call of an unknown owner's", async () => {
    const s = await store();
    expect(await s.begin(intent('a', 'stranger'), 1)).toBe(false);
    expect(await s.beat('stranger', 1)).toBe(false);
    expect(await s.counts()).toEqual({ rows: 0, unsettled: 0 });
  });

  it.skipIf(engine.skip)(
    "finds one call key's recorded calls, with their bills, and no other key's",
    async () => {
      const s = await store();
      await s.join('w1', 1);
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
      await s.billed(`${run}/0/1/b`, 'w1', 42);
      await s.drop(`${run}/0/1/c`, 'w1'); // refused: billed nothing
      await s.settle([`${run}/0/1/b`], 'w1', 5);
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
      await s.join('dead', 1_000);
      await s.join('live', 1_000);
      await s.begin(intent('d1', 'dead', 100), 1_000);
      await s.begin(intent('d2', 'dead', 200), 1_000);
      await s.begin(intent('d3', 'dead'), 1_000);
      await s.begin(intent('l1', 'live'), 1_000);
      await s.beat('live', 50_000);
      await s.billed('d1', 'dead', 42);
      await s.settle(['d3'], 'dead', 2_000);
      await s.join('sweeper', 50_000);
      const taken = await s.claimOrphans('sweeper', 20_000, 50_000, 10);
      expect(taken.owners).toEqual(['dead']);
      const row = { tenant: 't', attempt: 0, settled: false, madeBy: 'dead' };
      expect(taken.calls.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        // A billed row is charged its bill; an unbilled one provisionally, its worst case.
        { ...row, key: 'd1', runId: 'run-t-d1', reserved: 100, tokens: 42, provisional: false },
        { ...row, key: 'd2', runId: 'run-t-d2', reserved: 200, tokens: null, provisional: true },
      ]);
      // Taken rows are the sweeper's now (alive): a second sweeper finds nothing.
      await s.join('other', 50_000);
      expect(keysOf(await s.claimOrphans('other', 20_000, 50_000, 10))).toEqual([]);
      // The sweeper dies in turn: its rows go to the next one; the live owner's row still never does.
      await s.beat('live', 70_000);
      await s.beat('other', 70_000);
      const again = await s.claimOrphans('other', 60_000, 70_000, 10);
      expect(again.owners).toEqual(['sweeper']);
      expect(again.calls.map((c) => [c.key, c.madeBy]).sort()).toEqual([
        ['d1', 'dead'],
        ['d2', 'dead'],
      ]);
    },
  );

  it.skipIf(engine.skip)(
    'a fenced owner records nothing, beats no more, and owns none of its former rows',
    async () => {
      const s = await store();
      await s.join('stalled', 1_000);
      await s.begin(intent('x1', 'stalled', 100), 1_000);
      await s.begin(intent('x2', 'stalled', 100), 1_000);
      await s.billed('x2', 'stalled', 60);
      await s.join('sweeper', 50_000);
      expect(keysOf(await s.claimOrphans('sweeper', 20_000, 50_000, 10))).toEqual(['x1', 'x2']);
      // It resumes: every write of its own is refused, so it goes on under a new id.
      expect(await s.beat('stalled', 50_001)).toBe(false);
      expect(await s.begin(intent('x3', 'stalled'), 50_001)).toBe(false);
      expect(await s.billed('x1', 'stalled', 70)).toBe(false);
      expect(await s.provisional('x1', 'stalled')).toBe(false);
      await s.drop('x1', 'stalled');
      expect(await s.settle(['x1', 'x2'], 'stalled', 50_002)).toEqual([]);
      expect(await s.reconciled(['x1'], 'stalled', 50_002)).toEqual([]);
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 2 });
      expect((await s.callsOf('run-t-x1', 0, 'x1')).map((c) => c.tokens)).toEqual([null]);
      // The sweeper's they are.
      expect(await s.settle(['x1', 'x2'], 'sweeper', 50_003)).toEqual(['x1', 'x2']);
      // A fenced sweeper takes nothing.
      await s.join('late', 1_000);
      await s.begin(intent('y1', 'late'), 1_000);
      await expect(s.claimOrphans('stalled', 90_000, 100_000, 10)).rejects.toThrow(/fenced/);
      expect((await s.counts()).unsettled).toBe(1);
    },
  );

  it.skipIf(engine.skip)('two sweepers racing on one location never take a row twice', async () => {
    const location = await engine.location();
    const [a, b] = await Promise.all([store(location), store(location)]);
    for (let o = 0; o < 30; o++) {
      await a.join(`dead-${o}`, 1);
      for (let i = 0; i < 10; i++) await a.begin(intent(`k${o}-${i}`, `dead-${o}`), 1);
    }
    await a.join('a', 100);
    await b.join('b', 100);
    const drain = async (s: CallIntentStore, owner: string) => {
      const keys: string[] = [];
      for (;;) {
        const taken = await s.claimOrphans(owner, 50, 100, 3);
        if (!taken.owners.length) return keys;
        keys.push(...taken.calls.map((r) => r.key));
      }
    };
    const [ka, kb] = await Promise.all([drain(a, 'a'), drain(b, 'b')]);
    expect(ka.length + kb.length).toBe(300);
    expect(new Set([...ka, ...kb]).size).toBe(300);
  });

  it.skipIf(engine.skip)(
    'a call recorded while its owner is fenced is either taken with the rest or not recorded',
    async () => {
      const location = await engine.location();
      const [a, b] = await Promise.all([store(location), store(location)]);
      await a.join('stalled', 1);
      await a.join('sweeper', 100);
      for (let round = 0; round < 20; round++) {
        const owner = `stalled-${round}`;
        await a.join(owner, 1);
        await a.begin(intent(`first-${round}`, owner), 1);
        const [taken, ...recorded] = await Promise.all([
          b.claimOrphans('sweeper', 50, 100, 10),
          ...Array.from({ length: 5 }, (_, i) => a.begin(intent(`late-${round}-${i}`, owner), 2)),
        ]);
        const late = recorded.flatMap((ok, i) => (ok ? [`late-${round}-${i}`] : []));
        expect(keysOf(taken)).toEqual([`first-${round}`, ...late].sort());
        expect(await a.begin(intent(`after-${round}`, owner), 3)).toBe(false);
      }
      expect((await a.counts()).unsettled).toBe((await a.counts()).rows);
    },
  );

  it.skipIf(engine.skip)(
    'stays bounded: settled rows go after their keep, owners that owe nothing go once dead',
    async () => {
      const s = await store();
      await s.join('gone', 1);
      await s.join('owes', 1);
      for (let i = 0; i < 50; i++) await s.begin(intent(`s${i}`, 'gone'), 1);
      await s.begin(intent('open', 'owes'), 1);
      await s.settle(
        Array.from({ length: 50 }, (_, i) => `s${i}`),
        'gone',
        10,
      );
      await s.prune(10, 5); // settled at 10 is not before 10
      expect(await s.counts()).toEqual({ rows: 51, unsettled: 1 });
      await s.prune(11, 5);
      expect(await s.counts()).toEqual({ rows: 1, unsettled: 1 });
      // 'gone' owed nothing and was pruned: it is unknown now (it goes on under a new id). 'owes' was kept.
      expect(await s.beat('gone', 12)).toBe(false);
      await s.join('sweeper', 100);
      expect(keysOf(await s.claimOrphans('sweeper', 50, 100, 10))).toEqual(['open']);
      // Fenced and owing nothing, it goes too.
      await s.prune(11, 200);
      expect(await s.beat('owes', 201)).toBe(false);
    },
  );

  it.skipIf(engine.skip)(
    'provisional charges: due for lookup once settled and old enough, taken over with a dead owner, kept until reconciled',
    async () => {
      const s = await store();
      await s.join('w', 1_000);
      await s.begin(intent('p1', 'w', 100), 1_000); // cut: charged its reservation
      await s.begin(intent('p2', 'w', 200), 5_000);
      await s.begin(intent('b1', 'w', 50), 1_000); // billed: exact, never looked up
      await s.provisional('p1', 'w');
      await s.provisional('p2', 'w');
      await s.billed('b1', 'w', 40);
      // Not yet delivered: nothing to reconcile.
      expect(await s.dueForReconcile('w', 10_000, 10)).toEqual([]);
      await s.settle(['p1', 'p2', 'b1'], 'w', 6_000);
      expect((await s.dueForReconcile('w', 10_000, 10)).map((r) => r.key)).toEqual(['p1', 'p2']);
      expect(await s.dueForReconcile('w', 2_000, 10)).toEqual([
        { key: 'p1', tenant: 't', runId: 'run-t-p1', attempt: 0, reserved: 100, madeBy: 'w', madeAt: 1_000 },
      ]);
      // Settled long ago: the billed row goes, the provisional ones stay until reconciled.
      await s.prune(100_000, 0);
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 0 });
      expect(await s.reconciled(['p1'], 'w', 7_000)).toEqual(['p1']);
      expect((await s.dueForReconcile('w', 10_000, 10)).map((r) => r.key)).toEqual(['p2']);
      // The owner dies: a sweeper takes its unreconciled row (nothing to charge: it is settled).
      await s.join('sweeper', 200_000);
      const taken = await s.claimOrphans('sweeper', 100_000, 200_000, 10);
      expect(taken).toMatchObject({ owners: ['w'], calls: [{ key: 'p2', settled: true }] });
      expect(await s.dueForReconcile('w', 10_000, 10)).toEqual([]);
      expect(await s.reconciled(['p2'], 'w', 7_000)).toEqual([]);
      expect((await s.dueForReconcile('sweeper', 10_000, 10)).map((r) => r.key)).toEqual(['p2']);
      // A dead owner's unbilled row is charged its reservation by the sweep: marked provisional.
      await s.join('w2', 8_000);
      await s.begin(intent('c1', 'w2', 70), 8_000);
      expect((await s.claimOrphans('sweeper', 100_000, 200_000, 10)).calls).toMatchObject([
        { key: 'c1', tokens: null, settled: false },
      ]);
      await s.settle(['c1'], 'sweeper', 9_000);
      expect((await s.dueForReconcile('sweeper', 10_000, 10)).map((r) => r.key)).toEqual(['p2', 'c1']);
      await s.prune(100_000, 0); // p1, reconciled, goes
      expect(await s.counts()).toEqual({ rows: 2, unsettled: 0 });
      // Nothing reconciles them (no usage source): they go with the rest.
      await s.prune(100_000, 0, false);
      expect(await s.counts()).toEqual({ rows: 0, unsettled: 0 });
    },
  );

  // SQLite only: a PostgreSQL schema moves by its numbered migrations (none skipped in CI).
  if (engine.name === 'SQLite')
    it('a file from before fencing gains it, its rows still taken', async () => {
      const location = await engine.location();
      const old = openSqliteFile(location);
      old.exec(CALL_INTENTS_DDL);
      PROVISIONAL_COLUMNS.forEach((a) => old.exec(a));
      old
        .prepare(
          'INSERT INTO call_intents (key, tenant, run_id, attempt, reserved, owner, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run('v3', 't', 'run-t-v3', 0, 40, 'gone', 1);
      old.close();
      const s = await store(location);
      await s.join('next', 100);
      expect(await s.claimOrphans('next', 50, 100, 10)).toEqual({
        owners: ['gone'],
        calls: [
          {
            key: 'v3',
            tenant: 't',
            runId: 'run-t-v3',
            attempt: 0,
            reserved: 40,
            tokens: null,
            settled: false,
            madeBy: null,
            provisional: true,
          },
        ],
      });
      expect(await s.begin(intent('late', 'gone'), 101)).toBe(false);
    });

  it.skipIf(engine.skip)("keeps rows across reopening (a new process finds a dead one's calls)", async () => {
    const location = await engine.location();
    const first = await openCallIntents(location);
    await first.join('dead', 1);
    await first.begin(intent('x', 'dead', 70), 1);
    await first.close();
    const again = await store(location);
    await again.join('next', 100);
    expect((await again.claimOrphans('next', 50, 100, 10)).calls).toMatchObject([
      { key: 'x', reserved: 70, tokens: null },
    ]);
  });
});

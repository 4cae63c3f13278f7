import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ReportLog, ReportRow } from '../../../src/stores/report-log/report-log';
import { openReportLog } from '../../../src/stores/open';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

/** The scheduler's report log, the same tests against a SQLite file and a PostgreSQL database. */
let dir: string;
const engines = [sqliteEngine('call-intents.db', () => dir), postgresEngine()];

describe.each(engines)('report log ($name)', (engine) => {
  const open: ReportLog[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-report-log-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  async function log(location?: string): Promise<ReportLog> {
    const s = await openReportLog(location ?? (await engine.location()));
    open.push(s);
    return s;
  }
  const bodies = (rows: ReportRow[]) => rows.map((x) => x.body);
  const sched = () => `s-${Math.random().toString(36).slice(2)}`;

  it.skipIf(engine.skip)('reads in order past a cursor, each id once, per scheduler', async () => {
    const s = await log();
    const id = sched();
    await s.append(id, `${id}-1`, 'a', 1);
    await s.append(id, `${id}-2`, 'b', 2);
    await s.append(id, `${id}-1`, 'a again', 3); // a retried append
    await s.append(`${id}-other`, `${id}-x`, 'x', 3);
    const first = await s.read(id, 0, 1);
    expect(bodies(first)).toEqual(['a']);
    const second = await s.read(id, first[0]!.seq, 10);
    expect(bodies(second)).toEqual(['b']);
    // The same cursor again (a retried pull) reads the same rows.
    expect(await s.read(id, first[0]!.seq, 10)).toEqual(second);
    expect(await s.read(id, second[0]!.seq, 10)).toEqual([]);
    await s.append(id, `${id}-3`, 'c', 4);
    expect(bodies(await s.read(id, second[0]!.seq, 10))).toEqual(['c']);
  });

  it.skipIf(engine.skip)(
    'the acknowledgement never moves back; prune deletes only old acknowledged rows',
    async () => {
      const s = await log();
      const id = sched();
      expect(await s.acked(id)).toBe(0);
      for (let i = 1; i <= 4; i++) await s.append(id, `${id}-${i}`, `r${i}`, i);
      const rows = await s.read(id, 0, 10);
      await s.ack(id, rows[1]!.seq);
      await s.ack(id, 0); // an older cursor (a chain reset)
      expect(await s.acked(id)).toBe(rows[1]!.seq);
      expect(bodies(await s.read(id, await s.acked(id), 10))).toEqual(['r3', 'r4']);
      expect(await s.prune(id, 2)).toBe(1); // r1 only: r2 is acknowledged but not old enough
      expect(await s.prune(id, 100)).toBe(1); // r2; r3 and r4 are not acknowledged
      expect(bodies(await s.read(id, 0, 10))).toEqual(['r3', 'r4']);
    },
  );

  it.skipIf(engine.skip)(
    'concurrent appends from many writers are all read, once, each writer in order',
    async () => {
      const at = await engine.location();
      const writers = await Promise.all([log(at), log(at), log(at)]);
      const reader = await log(at);
      const id = sched();
      const seen: string[] = [];
      let after = 0;
      let done = false;
      const writing = Promise.all(
        writers.map(async (w, i) => {
          for (let n = 0; n < 60; n++) await w.append(id, `${id}-${i}-${n}`, `${i}-${n}`, n);
        }),
      ).then(() => (done = true));
      for (;;) {
        const wasDone = done;
        const rows = await reader.read(id, after, 25);
        seen.push(...bodies(rows));
        after = rows.at(-1)?.seq ?? after;
        if (wasDone && rows.length === 0) break;
      }
      await writing;
      expect(seen.length).toBe(180);
      expect(new Set(seen).size).toBe(180);
      for (let i = 0; i < 3; i++) {
        const own = seen.filter((b) => b.startsWith(`${i}-`)).map((b) => Number(b.split('-')[1]));
        expect(own).toEqual([...own].sort((x, y) => x - y));
      }
    },
  );
});

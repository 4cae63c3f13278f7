import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openSchedulerState, openStore } from '../../../src/stores/open';
import { mergeSettingsPatch } from '../../../src/stores/scheduler-state/scheduler-state';
import type { SchedulerStateStore } from '../../../src/stores/scheduler-state/scheduler-state';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

let dir: string;
const engines = [sqliteEngine('fairway.db', () => dir), postgresEngine()];

describe('mergeSettingsPatch', () => {
  it('applies the later patch field by field, floors too', () => {
    expect(
      mergeSettingsPatch(
        { concurrency: 5, floors: { standard: 0.2 } },
        { floors: { batch: 0.1 }, leaseTtlSeconds: 30 },
      ),
    ).toEqual({ concurrency: 5, floors: { standard: 0.2, batch: 0.1 }, leaseTtlSeconds: 30 });
  });
});

describe.each(engines)('scheduler state store ($name)', (engine) => {
  const open: { close(): Promise<void> }[] = [];
  let location: string;
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-sched-state-'));
    if (!engine.skip) location = await engine.location();
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const openAt = async (): Promise<SchedulerStateStore> => {
    const s = await openSchedulerState(location);
    open.push(s);
    return s;
  };

  it.skipIf(engine.skip)('starts empty; keeps the drain and merged patches across processes', async () => {
    const a = await openAt();
    expect(await a.get()).toEqual({ drain: null, settings: {}, updatedAt: 0 });
    await a.setDrain('hold', 1000);
    await a.patchSettings({ concurrency: 7 }, 2000);
    await a.patchSettings({ floors: { batch: 0.1 } }, 3000);
    // Another process (a new connection, the API store opened beside it) reads the same row.
    const api = await openStore(location);
    open.push(api);
    const b = await openAt();
    expect(await b.get()).toEqual({
      drain: 'hold',
      settings: { concurrency: 7, floors: { batch: 0.1 } },
      updatedAt: 3000,
    });
    await b.setDrain(null, 4000);
    expect(await a.get()).toMatchObject({ drain: null, settings: { concurrency: 7 }, updatedAt: 4000 });
  });

  it.skipIf(engine.skip)('concurrent patches all land', async () => {
    const [a, b] = [await openAt(), await openAt()];
    await Promise.all([
      a.patchSettings({ concurrency: 9 }, 1),
      b.patchSettings({ leaseTtlSeconds: 20 }, 2),
      a.patchSettings({ interactiveReserve: 0.2 }, 3),
      b.setDrain('refuse', 4),
    ]);
    expect(await a.get()).toMatchObject({
      drain: 'refuse',
      settings: { concurrency: 9, leaseTtlSeconds: 20, interactiveReserve: 0.2 },
    });
  });
});

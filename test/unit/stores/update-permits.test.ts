import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UpdatePermits } from '../../../src/stores/update-permits/update-permits';
import { openUpdatePermits } from '../../../src/stores/open';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

/** The workers' update permits, the same tests against a SQLite file and a PostgreSQL database. */
let dir: string;
const engines = [sqliteEngine('call-intents.db', () => dir), postgresEngine()];
const TTL = 1000;

describe.each(engines)('update permits ($name)', (engine) => {
  const open: UpdatePermits[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-update-permits-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  async function permits(location: string): Promise<UpdatePermits> {
    const s = await openUpdatePermits(location);
    open.push(s);
    return s;
  }
  const sched = () => `s-${Math.random().toString(36).slice(2)}`;

  it.skipIf(engine.skip)('concurrent acquirers on separate connections never hold more than N', async () => {
    const location = await engine.location();
    const conns = await Promise.all(Array.from({ length: 8 }, () => permits(location)));
    const id = sched();
    // 40 acquirers at once over 8 connections, for 3 permits: exactly 3 win, on 3 distinct slots.
    const won = await Promise.all(
      Array.from({ length: 40 }, (_, i) => conns[i % conns.length]!.acquire(id, 3, `h${i}`, 100, TTL)),
    );
    const slots = won.filter((s) => s !== undefined);
    expect(slots).toHaveLength(3);
    expect(new Set(slots).size).toBe(3);
    // Another scheduler's permits are its own.
    expect(await conns[0]!.acquire(`${id}-other`, 3, 'x', 100, TTL)).toBeDefined();
  });

  it.skipIf(engine.skip)('a released permit is free again; release is idempotent', async () => {
    const s = await permits(await engine.location());
    const id = sched();
    const a = await s.acquire(id, 2, 'a', 100, TTL);
    const b = await s.acquire(id, 2, 'b', 100, TTL);
    expect([a, b].sort()).toEqual([0, 1]);
    expect(await s.acquire(id, 2, 'c', 100, TTL)).toBeUndefined();
    await s.release(id, a!, 'a');
    const c = await s.acquire(id, 2, 'c', 100, TTL);
    expect(c).toBe(a);
    // `a` releasing again (a retried release) frees nothing: `c` holds the slot now.
    await s.release(id, a!, 'a');
    expect(await s.acquire(id, 2, 'd', 100, TTL)).toBeUndefined();
    await s.release(id, c!, 'c');
    await s.release(id, c!, 'c');
    expect(await s.acquire(id, 2, 'd', 100, TTL)).toBe(c);
    expect(await s.acquire(id, 2, 'e', 100, TTL)).toBeUndefined();
  });

  it.skipIf(engine.skip)("an expired holder's permit is reclaimed; a renewed one is not", async () => {
    const s = await permits(await engine.location());
    const id = sched();
    const dead = await s.acquire(id, 2, 'dead', 100, TTL);
    const live = await s.acquire(id, 2, 'live', 100, TTL);
    expect(await s.acquire(id, 2, 'new', 100 + TTL - 1, TTL)).toBeUndefined();
    expect(await s.renew(id, live!, 'live', 100 + 3 * TTL)).toBe(true);
    // Past the dead holder's lease its slot is taken over; the renewed one stays held.
    expect(await s.acquire(id, 2, 'new', 100 + TTL, TTL)).toBe(dead);
    expect(await s.acquire(id, 2, 'newer', 100 + TTL, TTL)).toBeUndefined();
    // The dead holder neither renews nor frees what is no longer its own.
    expect(await s.renew(id, dead!, 'dead', 100 + 5 * TTL)).toBe(false);
    await s.release(id, dead!, 'dead');
    expect(await s.acquire(id, 2, 'newer', 100 + TTL, TTL)).toBeUndefined();
  });
});

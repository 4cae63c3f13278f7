import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { countingScheduler } from '../../support/counting-scheduler';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PermitGate, schedulerUpdates } from '../../../src/activities/scheduler-updates';
import type { SchedulerUpdate } from '../../../src/activities/scheduler-updates';
import { submitUpdate } from '../../../src/contract/scheduler-messages';
import { openUpdatePermits } from '../../../src/stores/open';
import type { UpdatePermits } from '../../../src/stores/update-permits/update-permits';
import { postgresEngine, sqliteEngine } from '../../support/store-engines';

const log = pino({ level: 'silent' });
const SLOTS = 4;
const WORKERS = 24;

const fakeScheduler = () => countingScheduler([]);

/** Every worker sends `perWorker` updates, three at a time (its two coalescers and its offer batcher). */
async function burst(updates: SchedulerUpdate[], perWorker: number): Promise<void> {
  await Promise.all(
    updates.map(async (update) => {
      for (let sent = 0; sent < perWorker; sent += 3)
        await Promise.all([0, 1, 2].map(() => update(submitUpdate, [[]])));
    }),
  );
}

let dir: string;
const engines = [sqliteEngine('call-intents.db', () => dir), postgresEngine()];

describe.each(engines)('workers’ scheduler updates under the fleet’s permits ($name)', (engine) => {
  const open: UpdatePermits[] = [];
  beforeAll(async () => {
    if (!engine.skip) await engine.setup();
  }, 120_000);
  afterAll(() => engine.teardown(), 120_000);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-scheduler-updates-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** `n` workers, each with a store connection and a gate of its own, as separate processes would be. */
  async function workers(
    n: number,
    client: Client,
    location: string,
    ttlMs = 15_000,
  ): Promise<SchedulerUpdate[]> {
    return Promise.all(
      Array.from({ length: n }, async () => {
        const permits = await openUpdatePermits(location);
        open.push(permits);
        return schedulerUpdates(
          client,
          'scheduler',
          new PermitGate(permits, 'scheduler', { slots: SLOTS, ttlMs }, log),
        );
      }),
    );
  }

  it.skipIf(engine.skip)(
    `${WORKERS} workers never have more than ${SLOTS} updates in flight, and every update is answered`,
    async () => {
      const { client, seen } = fakeScheduler();
      await burst(await workers(WORKERS, client, await engine.location()), 9);
      expect(seen.answered).toBe(WORKERS * 9);
      expect(seen.max).toBeLessThanOrEqual(SLOTS);
      // The permits were used to the full (the bound, not one worker at a time).
      expect(seen.max).toBe(SLOTS);
      // The same callers without permits go past the share: the bound above is the permits'.
      const free = fakeScheduler();
      await burst(
        Array.from({ length: WORKERS }, () => schedulerUpdates(free.client, 'scheduler', undefined)),
        9,
      );
      expect(free.seen.max).toBeGreaterThan(SLOTS);
    },
    60_000,
  );

  it.skipIf(engine.skip)("a killed worker's permits free themselves after their lease", async () => {
    const { client, seen } = fakeScheduler();
    const location = await engine.location();
    const killed = await openUpdatePermits(location);
    open.push(killed);
    // A worker that took every permit and died without releasing them.
    for (let i = 0; i < SLOTS; i++)
      expect(await killed.acquire('scheduler', SLOTS, `killed-${i}`, Date.now(), 300)).toBeDefined();
    const started = Date.now();
    await burst(await workers(3, client, location, 300), 3);
    expect(seen.answered).toBe(9);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it.skipIf(engine.skip)('a wait for a permit ends when its activity is cancelled', async () => {
    const { client, seen } = fakeScheduler();
    const location = await engine.location();
    const holder = await openUpdatePermits(location);
    open.push(holder);
    for (let i = 0; i < SLOTS; i++) await holder.acquire('scheduler', SLOTS, `h-${i}`, Date.now(), 60_000);
    const [update] = await workers(1, client, location);
    const cancel = new AbortController();
    const sent = update!(submitUpdate, [[]], { signal: cancel.signal });
    setTimeout(() => cancel.abort(), 50);
    await expect(sent).rejects.toBeInstanceOf(CancelledFailure);
    expect(seen.answered).toBe(0);
  });
});

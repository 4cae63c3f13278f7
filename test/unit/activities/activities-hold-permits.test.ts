import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import type { SchedulerMailbox } from '../../../src/activities/mailbox';
import { PermitGate } from '../../../src/activities/scheduler-updates';
import type { TopUpRequest } from '../../../src/contract/scheduler-messages';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import { openSqliteUpdatePermits } from '../../../src/stores/update-permits/update-permits-sqlite';
import type { UpdatePermits } from '../../../src/stores/update-permits/update-permits';

const log = pino({ level: 'silent' });
let dir: string;
const open: UpdatePermits[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fairway-activity-permits-'));
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A scheduler that answers every update (accepting, granting) and records which it was sent. */
function fakeClient(sent: string[]): Client {
  return {
    workflow: {
      getHandle: () => ({
        query: async (_q: unknown, runIds: string[]) => runIds.map(() => false),
        async executeUpdate(def: { name: string }, o: { args: [unknown[]] }) {
          sent.push(def.name);
          return o.args[0].map((u) => ({
            runId: (u as { runId: string }).runId,
            accepted: true,
            granted: true,
          }));
        },
      }),
    },
    withAbortSignal: <R>(_s: AbortSignal, fn: () => Promise<R>) => fn(),
  } as unknown as Client;
}

it("a worker's resubmits, top-ups and offers wait for a permit of the fleet's, then go", async () => {
  const file = join(dir, 'call-intents.db');
  const [held, mine] = [openSqliteUpdatePermits(file), openSqliteUpdatePermits(file)];
  open.push(held, mine);
  // Another worker holds the one permit.
  expect(await held.acquire('sched', 1, 'other', Date.now(), 60_000)).toBe(0);
  const sent: string[] = [];
  const activities = createActivities({
    client: fakeClient(sent),
    startRun: async () => 'started',
    discardRun: async () => undefined,
    recoverUsage: async () => ({ usage: [], activeRuns: 0, scanned: 0, truncated: false }),
    schedulerId: 'sched',
    mailbox: {} as SchedulerMailbox,
    model: { complete: async () => ({ usedTokens: 0, latencyMs: 0 }) },
    effects: {} as EffectStore,
    updatePermits: new PermitGate(mine, 'sched', { slots: 1, ttlMs: 60_000 }, log),
    log,
  });
  const env = new MockActivityEnvironment();
  const unit = { runId: 'run-t-1', tenant: 't', priority: 'standard', cost: 1, attempt: 0 } as const;
  const done = Promise.all([
    env.run(activities.resubmit, unit),
    env.run(activities.requestTopUp, { runId: 'run-t-2' } as TopUpRequest),
    env.run(activities.offerRun, { ...unit, runId: 'run-t-3' }),
  ]);
  await new Promise((r) => setTimeout(r, 300));
  expect(sent).toEqual([]);
  await held.release('sched', 0, 'other');
  const [resubmitted, , offered] = await done;
  expect(resubmitted).toMatchObject({ accepted: true });
  expect(offered).toMatchObject({ state: 'queued' });
  expect([...sent].sort()).toEqual(['submit', 'submit', 'topUps']);
});

import { randomBytes } from 'node:crypto';
import { WorkflowUpdateStage } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The scheduler input of the probe: a small fleet whose leases expire within the load's span. */
export const PROBE_SCHEDULER_INPUT = {
  settings: { concurrency: 8, floors: { standard: 0, batch: 0 }, leaseTtlSeconds: 3, globalMaxQueued: 1000 },
};

/**
 * What a loaded fleet sends its scheduler, for `ms`: a stream of submit and topUp updates (four
 * top-ups per submit), worker reports as updates and as signals, status queries; and every 40th
 * step `pause(ms)` (the caller stops the only workflow worker for 1 to 3.5 s, longer than the
 * scheduler's 2-s workflow task timeout), so tasks time out while activities complete and queries
 * wait. Resolves once every message has been answered or 30 s have passed, with the messages still
 * out (they end once the scheduler does).
 */
export async function driveScheduler(
  h: WorkflowHandle,
  ms: number,
  pause: (ms: number) => void,
): Promise<{ outstanding: Promise<unknown> }> {
  const upd = (name: string, arg: unknown): Promise<unknown> =>
    h
      .startUpdate(name, { args: [arg], waitForStage: WorkflowUpdateStage.ACCEPTED })
      .then((u) => u.result())
      .catch(String);
  await upd('upsertTenants', [
    {
      tenant: 'ta',
      settings: { weight: 1, maxQueued: 500, maxInFlight: 8, budget: { tokens: null, period: 'none' } },
    },
  ]);
  const ids: string[] = [];
  const pending: Promise<unknown>[] = [];
  const t0 = Date.now();
  let pausedUntil = 0;
  for (let k = 1; Date.now() - t0 < ms; k++) {
    const id = `run-ta-${randomBytes(10).toString('hex')}`;
    ids.push(id);
    pending.push(upd('submit', [{ runId: id, tenant: 'ta', priority: 'standard', cost: 10 }]));
    for (let i = 0; i < 4; i++)
      pending.push(
        upd('topUp', { runId: ids[Math.floor(Math.random() * ids.length)], attempt: 0, tokens: 5 }),
      );
    if (k % 3 === 0 && ids.length > 3) {
      const report = {
        id: `report-${k}`,
        releases: [{ runId: ids.shift(), attempt: 0, usedTokens: 5, outcome: 'completed' }],
      };
      pending.push(k % 2 === 0 ? h.signal('report', report).catch(String) : upd('workerReport', report));
    }
    if (k % 7 === 0) pending.push(h.query('status').catch(String));
    if (k % 40 === 0 && Date.now() > pausedUntil) {
      const pauseMs = 1000 + Math.floor(Math.random() * 2500);
      pausedUntil = Date.now() + pauseMs + 1500;
      pause(pauseMs);
    }
    await sleep(Math.random() * 40);
  }
  const outstanding = Promise.allSettled(pending);
  await Promise.race([outstanding, sleep(30_000)]);
  return { outstanding };
}

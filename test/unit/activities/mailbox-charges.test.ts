import type { Client } from '@temporalio/client';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SchedulerMailbox } from '../../../src/activities/mailbox';
import type { WorkerReport } from '../../../src/workflows/scheduler-messages';

/** A client whose scheduler handle takes report signals, or refuses them while `down`. */
function scheduler() {
  const reports: WorkerReport[] = [];
  const state = { down: false };
  const client = {
    workflow: {
      getHandle: () => ({
        signal: async (_def: unknown, report: WorkerReport) => {
          if (state.down) throw new Error('scheduler unreachable');
          reports.push(report);
        },
      }),
    },
  } as unknown as Client;
  return { client, reports, state };
}

const charge = (runId: string, tokens: number) => ({ tenant: 't', runId, attempt: 0, tokens });

describe('the mailbox hands back the call keys of delivered charges', () => {
  it('only after the report carrying them was delivered, keeping them across a failed one', async () => {
    const s = scheduler();
    const mailbox = new SchedulerMailbox(s.client, 'sched', 3_600_000, () => null, pino({ level: 'silent' }));
    const settled: string[][] = [];
    mailbox.onCharged = (keys) => settled.push(keys);
    mailbox.charge(charge('r1', 10), ['k1']);
    mailbox.charge(charge('r1', 5), ['k2']);
    s.state.down = true;
    await mailbox.flush(true);
    expect(settled).toEqual([]);
    mailbox.charge(charge('r2', 7), ['k3']);
    s.state.down = false;
    await mailbox.flush(true);
    expect(settled).toEqual([['k1', 'k2', 'k3']]);
    expect(s.reports).toHaveLength(1);
    expect(s.reports[0]!.charges).toEqual(expect.arrayContaining([charge('r1', 15), charge('r2', 7)]));
    // A call billed nothing: its key is settled with the next flush, with nothing to send.
    mailbox.charge(charge('r3', 0), ['k4']);
    await mailbox.flush(true);
    expect(settled).toEqual([['k1', 'k2', 'k3'], ['k4']]);
    expect(s.reports).toHaveLength(1);
    await mailbox.close();
  });
});

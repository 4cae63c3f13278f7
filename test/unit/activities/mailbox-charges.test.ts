import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SchedulerMailbox } from '../../../src/activities/mailbox';
import type { WorkerReport } from '../../../src/contract/scheduler-messages';

/**
 * A client whose scheduler handle takes report updates (recording each delivery with its update
 * id), refuses them while `down`, answers "no handler" while `old` (a scheduler of an older version),
 * and takes report signals.
 */
function scheduler() {
  const updates: { id: string; report: WorkerReport }[] = [];
  const signals: WorkerReport[] = [];
  const state = { down: false, old: false, lostAnswer: false };
  const client = {
    workflow: {
      getHandle: () => ({
        executeUpdate: async (_def: unknown, o: { args: [WorkerReport]; updateId: string }) => {
          if (state.down) throw new Error('scheduler unreachable');
          if (state.old)
            throw new WorkflowUpdateFailedError(
              'Workflow Update failed',
              ApplicationFailure.nonRetryable('No registered handler for update: workerReport'),
            );
          updates.push({ id: o.updateId, report: o.args[0] });
          if (state.lostAnswer) throw new Error('deadline exceeded');
        },
        signal: async (_def: unknown, report: WorkerReport) => {
          if (state.down) throw new Error('scheduler unreachable');
          signals.push(report);
        },
      }),
    },
  } as unknown as Client;
  return { client, updates, signals, state };
}

const charge = (runId: string, tokens: number) => ({ tenant: 't', runId, attempt: 0, tokens });
const quiet = pino({ level: 'silent' });

describe('the mailbox hands back the keyed charges it delivered', () => {
  it('only after the report carrying them was delivered, keeping them across a failed one', async () => {
    const s = scheduler();
    const mailbox = new SchedulerMailbox(s.client, 'sched', 3_600_000, () => [], quiet);
    const settled: string[][] = [];
    mailbox.onCharged = (delivered) => settled.push(delivered.map((c) => c.key!));
    mailbox.charge({ ...charge('r1', 10), key: 'k1' });
    mailbox.charge({ ...charge('r1', 5), key: 'k2' });
    s.state.down = true;
    await mailbox.flush(true);
    expect(settled).toEqual([]);
    mailbox.charge({ ...charge('r2', 7), key: 'k3' });
    s.state.down = false;
    // The failed report goes again as it was; what came meanwhile follows in the next one.
    await mailbox.flush(true);
    expect(settled).toEqual([['k1', 'k2']]);
    await mailbox.flush(true);
    expect(settled).toEqual([['k1', 'k2'], ['k3']]);
    // Keyed charges go one per call (the ledger books each key once); unkeyed ones are summed per attempt.
    expect(s.updates.map((u) => u.report.charges)).toEqual([
      [
        { ...charge('r1', 10), key: 'k1' },
        { ...charge('r1', 5), key: 'k2' },
      ],
      [{ ...charge('r2', 7), key: 'k3' }],
    ]);
    // A call billed nothing: its key is handed back with the next flush, with nothing to send.
    mailbox.charge({ ...charge('r3', 0), key: 'k4' });
    await mailbox.flush(true);
    expect(settled).toEqual([['k1', 'k2'], ['k3'], ['k4']]);
    expect(s.updates).toHaveLength(2);
    mailbox.charge(charge('r4', 3));
    mailbox.charge(charge('r4', 4));
    await mailbox.flush(true);
    expect(s.updates.at(-1)?.report.charges).toEqual([charge('r4', 7)]);
    await mailbox.close();
  });

  it('tells the scheduler what was settled with the next report, again after a failed one', async () => {
    const s = scheduler();
    const mailbox = new SchedulerMailbox(s.client, 'sched', 3_600_000, () => [], quiet);
    mailbox.confirm(['aaaaaaaa', 'bbbbbbbb']);
    s.state.down = true;
    await mailbox.flush(true);
    s.state.down = false;
    await mailbox.flush(true);
    expect(s.updates.map((u) => u.report.settled)).toEqual([['aaaaaaaa', 'bbbbbbbb']]);
    await mailbox.flush(true);
    expect(s.updates).toHaveLength(1);
    await mailbox.close();
  });
});

describe('reports are updates with ids of their own', () => {
  it('a report whose answer was lost is sent again under the same id, never merged into a newer one', async () => {
    const s = scheduler();
    const mailbox = new SchedulerMailbox(s.client, 'sched', 3_600_000, () => [], quiet);
    mailbox.charge(charge('r1', 10));
    // Delivered, but the answer is lost: the mailbox cannot tell, and sends it again.
    s.state.lostAnswer = true;
    await mailbox.flush(true);
    s.state.lostAnswer = false;
    mailbox.charge(charge('r1', 3));
    await mailbox.flush(true);
    await mailbox.flush(true);
    const [first, again, next] = s.updates;
    // The same report under the same id (the report carries it too): the server answers a repeat to
    // one run once, and the scheduler applies an id once per run.
    expect(again).toEqual(first);
    expect(first!.report.id).toBe(first!.id);
    expect(next!.id).not.toBe(first!.id);
    expect(next!.report.charges).toEqual([charge('r1', 3)]);
    expect(new Set(s.updates.map((u) => u.id)).size).toBe(2);
    await mailbox.close();
  });

  it('a release resolves once its report is delivered, after a failure too', async () => {
    const s = scheduler();
    const mailbox = new SchedulerMailbox(s.client, 'sched', 3_600_000, () => [], quiet);
    s.state.down = true;
    let released = false;
    const release = mailbox
      .release({ runId: 'r1', attempt: 0, usedTokens: 10, outcome: 'completed' })
      .then(() => (released = true));
    await mailbox.flush(true);
    expect(released).toBe(false);
    s.state.down = false;
    await mailbox.flush(true);
    await release;
    expect(s.updates.map((u) => u.report.releases?.map((r) => r.runId))).toEqual([['r1']]);
    await mailbox.close();
  });

  it('a worker that begins to stop reports by signal, and its update on the way goes again as a signal under its id', async () => {
    const signals: WorkerReport[] = [];
    let answer: (() => void) | undefined;
    let sent!: () => void;
    const updateSent = new Promise<void>((resolve) => (sent = resolve));
    const client = {
      workflow: {
        getHandle: () => ({
          // No workflow worker takes the scheduler's task any more: the update is never answered.
          executeUpdate: () => {
            sent();
            return new Promise<void>((resolve) => (answer = resolve));
          },
          signal: async (_def: unknown, report: WorkerReport) => void signals.push(report),
        }),
      },
    } as unknown as Client;
    let stopping = false;
    const mailbox = new SchedulerMailbox(
      client,
      'sched',
      3_600_000,
      () => [],
      quiet,
      () => stopping,
    );
    let released = false;
    const release = mailbox
      .release({ runId: 'r1', attempt: 0, usedTokens: 10, outcome: 'completed' })
      .then(() => (released = true));
    const flushed = mailbox.flush(true);
    // The update is on its way and unanswered; what that unblocks runs within a turn of the loop.
    await updateSent;
    await new Promise((r) => setImmediate(r));
    expect(answer).toBeDefined();
    expect(released).toBe(false);
    stopping = true;
    await flushed;
    await release;
    expect(signals.map((r) => r.releases?.map((x) => x.runId))).toEqual([['r1']]);
    // The same id as the update: the scheduler applies it once if the update is answered later too.
    expect(signals[0]!.id).toMatch(/^report-[0-9a-f]{8}-1$/);
    answer?.();
    // Later reports go as signals at once.
    mailbox.charge(charge('r2', 4));
    await mailbox.flush(true);
    expect(signals.map((r) => r.charges)).toEqual([undefined, [charge('r2', 4)]]);
    await mailbox.close();
  });

  it('reports by signal while the scheduler has no update handler (older code mid-deploy)', async () => {
    const s = scheduler();
    const mailbox = new SchedulerMailbox(s.client, 'sched', 3_600_000, () => [], quiet);
    s.state.old = true;
    mailbox.charge(charge('r1', 10));
    await mailbox.flush(true);
    mailbox.charge(charge('r2', 4));
    await mailbox.flush(true);
    expect(s.updates).toEqual([]);
    expect(s.signals.map((r) => r.charges)).toEqual([[charge('r1', 10)], [charge('r2', 4)]]);
    await mailbox.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainHistories, eventCounts, taskTrouble } from '../../bench/lib/history-account';
import { expectEffectsOnce, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * Load comes in small batches, two at a time: while one runs, the next is already queued behind it,
 * so the fleet's slots stay busy and the scheduler never idles between batches (a new one is
 * submitted as soon as the older of the two completes, polled every 250 ms). Cycles are bound by the
 * scheduler's workflow tasks (three or four per cycle with a budget of 10 events), not by units, and
 * a small fleet makes more of them per unit: with 4 slots each admission, release and submission is
 * a message of its own, so about two units make a cycle (at 20 slots and rounds of 50 the scheduler
 * batched them and a cycle took 11 units: 1,150 units and 86 s for the same 100 cycles).
 *
 * The suite's dev server lets a continued run start at once (test/support/global-setup.ts): by
 * default Temporal holds a run that continued-as-new less than a second after its own start for the
 * rest of that second, which made every cycle here cost a second whatever the load. A production
 * scheduler run lasts thousands of events and never meets that hold; messages sent during the switch
 * still land in the next run (the old run's last task fails with UnhandledCommand and is retried).
 */
const ROUND = 10;
const SLOTS = 4;
const MAX_ROUNDS = 80;

describe('months of uptime: continue-as-new under load', () => {
  let s: TestStack;
  beforeAll(async () => {
    // A tiny history budget makes the scheduler continue-as-new every few dozen events.
    s = await startTestStack(
      // Reports flushed every 50 ms (production: 100): more of the scheduler's tasks per unit, so
      // fewer units make the 100 cycles.
      {
        FLEET_CONCURRENCY: String(SLOTS),
        MODEL_TPM: '1000000000',
        MODEL_RPM: '100000000',
        MAILBOX_FLUSH_MS: '50',
      },
      {
        scheduler: { maxHistoryEvents: 10 },
      },
    );
  });
  afterAll(() => s?.close());

  it('survives 100+ continue-as-new cycles losing no unit and admitting none twice', async () => {
    const t = await s.tenant(`can-${s.id}`, { maxQueued: 10_000, maxInFlight: SLOTS });
    const t0 = Date.now();
    let units = 0;
    let cycles = 0;
    const submit = async (): Promise<string> => {
      // A 503 (the scheduler did not answer in time, on a loaded machine) is retried after its
      // Retry-After with the same Idempotency-Key, as a client does: the batch is created once.
      const key = `can-batch-${units}`;
      const send = () =>
        s.call('POST', '/v1/batches', {
          token: t,
          headers: { 'idempotency-key': key },
          body: {
            agent: 'synthetic',
            items: Array.from({ length: ROUND }, () => ({ steps: 1, tokensPerStep: 10, effect: true })),
          },
        });
      let batch = await send();
      for (let i = 0; i < 10 && batch.status === 503; i++) {
        await new Promise((r) => setTimeout(r, 1000 * Number(batch.headers.get('retry-after') ?? 1)));
        batch = await send();
      }
      expect(batch.status).toBe(202);
      units += ROUND;
      return batch.body.batchId as string;
    };
    // Keep the load on until 100 cycles have passed: two batches in flight, every one completes whole.
    const inFlight = [await submit()];
    for (let round = 1; inFlight.length > 0; round++) {
      if (cycles < 100 && round < MAX_ROUNDS) inFlight.push(await submit());
      const batchId = inFlight.shift()!;
      const done = await waitFor(
        () => s.call('GET', `/v1/batches/${batchId}`, { token: t }),
        (v) => v.body?.completed === ROUND,
        120_000,
        250,
      );
      expect(done.body).toMatchObject({ total: ROUND, completed: ROUND, failed: 0 });
      // The status is a query: while a continue-as-new task is retried it may answer 503 for a moment.
      const st = await waitFor(
        () => s.call('GET', '/v1/admin/scheduler'),
        (v) => v.status === 200,
        60_000,
      );
      cycles = st.body.history.continuedAsNew as number;
    }
    const status = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.counters.completed === units,
      30_000,
    );
    console.log(
      `continue-as-new: ${status.body.history.continuedAsNew} cycles for ${units} units in ${Math.round((Date.now() - t0) / 1000)} s`,
    );
    expect(status.body.history.continuedAsNew).toBeGreaterThanOrEqual(100);
    expect(status.body.counters).toMatchObject({
      submitted: units,
      admitted: units,
      completed: units,
      expired: 0,
    });
    expect(status.body.inFlight).toBe(0);
    // Counted where they land: the sink, the simulator's call log, the effect step's runs.
    await expectEffectsOnce(s, units);

    // Reports reach the scheduler as updates: none failed a continue-as-new task. A signal that arrives
    // while that task is in flight fails it (UnhandledCommand) and its retry replays the whole run; the
    // worker's reports came as signals every 50 ms before, and failed such tasks again and again. The
    // watchdog's few recover signals still can, at most once each.
    const histories = await chainHistories(s.client, s.config.schedulerWorkflowId);
    const trouble = taskTrouble(histories);
    const events = eventCounts(histories);
    const unhandled = trouble.filter((t) => t.message.includes('UnhandledCommand'));
    const signals = Object.entries(events)
      .filter(([name]) => name.startsWith('workflowExecutionSignaled'))
      .reduce((n, [, count]) => n + count, 0);
    console.log(
      `continue-as-new: ${unhandled.length} tasks failed by a signal, ${signals} signals in the chain: ${JSON.stringify(events)}`,
    );
    expect(events['workflowExecutionSignaled(report)'] ?? 0).toBe(0);
    expect(unhandled.length).toBeLessThanOrEqual(signals);
  });
});

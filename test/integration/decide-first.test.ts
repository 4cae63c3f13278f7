import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { temporal } from '@temporalio/proto';
import { submitUpdate } from '../../src/contract/scheduler-messages';
import { reofferSignal } from '../../src/contract/run-messages';
import { effectsSeen, expectEffectsOnce, startBareRun, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';
import { startedAdmitted as startedWithAdmission } from '../../bench/lib/history-account';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(s: TestStack, runId: string): Promise<HistoryEvent[]> {
  return (await s.client.workflow.getHandle(runId).fetchHistory()).events ?? [];
}

const signalled = (events: HistoryEvent[], name: string) =>
  events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === name).length;
const timers = (events: HistoryEvent[]) => events.filter((e) => e.timerStartedEventAttributes).length;
const workflowTasks = (events: HistoryEvent[]) =>
  events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
/** The run's start carried its admission (the third argument of `runWorkflow`). */
const startedAdmitted = (events: HistoryEvent[]) =>
  events[0] !== undefined && startedWithAdmission(events[0] as Record<string, unknown>);

/**
 * Decide, then start (RUN_START_ORDER=decide-first) on the real dev server: the API submits first;
 * a run admitted in the answer starts with its admission, one that must queue is started first and
 * submitted again. Two slots, so some runs of a burst queue.
 */
describe('decide, then start (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({
      RUN_START_ORDER: 'decide-first',
      FLEET_CONCURRENCY: '2',
      FLEET_INTERACTIVE_RESERVE: '0',
      LEASE_TTL_SECONDS: '5',
    });
  });
  afterAll(() => s?.close());

  it('a burst: runs admitted at once start admitted (no admit signal, no timer), the rest queue; each runs once', async () => {
    const tenant = `first-${s.id}`;
    const token = await s.tenant(tenant);
    const since = await effectsSeen(s);
    const n = 8;
    const replies = await Promise.all(
      Array.from({ length: n }, () =>
        s.call('POST', '/v1/runs', {
          token,
          body: { agent: 'synthetic', input: { steps: 2, stepMs: 200, tokensPerStep: 10, effect: true } },
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(n).fill(202));
    const ids = replies.map((r) => r.body.runId as string);
    const done = await waitFor(
      () => Promise.all(ids.map((id) => s.call('GET', `/v1/runs/${id}`, { token }))),
      (rs) => rs.every((r) => r.body?.status === 'completed'),
      180_000,
      500,
    );
    expect(done.map((r) => r.body.status)).toEqual(Array(n).fill('completed'));
    await expectEffectsOnce(s, n, { since });

    const histories = await Promise.all(ids.map((id) => historyOf(s, id)));
    const admitted = histories.filter(startedAdmitted);
    const queued = histories.filter((h) => !startedAdmitted(h));
    // The first two found free slots; with two slots and eight at once, some had to queue.
    expect(admitted.length).toBeGreaterThanOrEqual(2);
    expect(queued.length).toBeGreaterThanOrEqual(1);
    for (const h of admitted) {
      expect(signalled(h, 'admit')).toBe(0);
      expect(timers(h)).toBe(0);
    }
    // A run that had to queue waited out a start delay its admission ended (RUN_QUEUED_START=delayed):
    // no workflow task and no timer while it waited; its first task came after the admission.
    for (const h of queued) {
      expect(signalled(h, 'admit')).toBe(1);
      expect(h[0]?.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff).toBeTruthy();
      const admitAt = h.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'admit');
      const firstTask = h.findIndex((e) => e.workflowTaskScheduledEventAttributes);
      expect(firstTask).toBeGreaterThan(admitAt);
      expect(timers(h)).toBe(0);
    }
    const mean = (hs: HistoryEvent[][], f: (h: HistoryEvent[]) => number) =>
      hs.reduce((x, h) => x + f(h), 0) / hs.length;
    console.log(
      `decide-first: ${admitted.length} started admitted (${mean(admitted, (h) => h.length).toFixed(1)} events, ` +
        `${mean(admitted, workflowTasks).toFixed(2)} workflow tasks a run), ${queued.length} queued ` +
        `(${mean(queued, (h) => h.length).toFixed(1)} events, ${mean(queued, workflowTasks).toFixed(2)} tasks)`,
    );
    expect(mean(admitted, (h) => h.length)).toBeLessThan(mean(queued, (h) => h.length));
    const status = (await s.call('GET', '/v1/admin/scheduler')).body;
    expect(status).toMatchObject({ inFlight: 0, queued: { total: 0 } });
    expect(status.counters.completed).toBeGreaterThanOrEqual(n);
  });

  it('a queued run waiting out its start delay is cancelled without waiting for a slot', async () => {
    const tenant = `cancel-${s.id}`;
    const token = await s.tenant(tenant);
    const submit = (stepMs: number) =>
      s.call('POST', '/v1/runs', {
        token,
        body: { agent: 'synthetic', input: { steps: 1, stepMs, tokensPerStep: 10 } },
      });
    // Two long runs hold both slots; the third queues, started with a delay.
    const holders = await Promise.all([submit(60_000), submit(60_000)]);
    const queued = await submit(10);
    expect([...holders, queued].map((r) => r.status)).toEqual([202, 202, 202]);
    const runId = queued.body.runId as string;
    const d = await s.client.workflow.getHandle(runId).describe();
    expect(d.executionTime!.getTime()).toBeGreaterThan(d.startTime.getTime());
    expect((await s.call('POST', `/v1/runs/${runId}/cancel`, { token })).status).toBe(202);
    const view = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token }),
      (v) => v.body?.status === 'cancelled',
      60_000,
      100,
    );
    expect(view.body.status).toBe('cancelled');
    // Cancelled while both slots were still held: the cancel ended its delay, not an admission.
    expect(view.body.admittedAt ?? null).toBeNull();
    const held = await Promise.all(
      holders.map((r) => s.call('GET', `/v1/runs/${r.body.runId as string}`, { token })),
    );
    expect(held.map((r) => r.body.status)).toEqual(['running', 'running']);
    for (const r of holders) await s.call('POST', `/v1/runs/${r.body.runId as string}/cancel`, { token });
    const free = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (r) => r.body.inFlight === 0,
      60_000,
      250,
    );
    expect(free.body.inFlight).toBe(0);
  });

  it('the API lost between decision and start: the unused lease expires, the unit is never ended, its run completes', async () => {
    const tenant = `lost-${s.id}`;
    await s.tenant(tenant);
    const runId = `run-${tenant}-${'0'.repeat(19)}7`;
    const scheduler = s.client.workflow.getHandle(s.config.schedulerWorkflowId);
    const before = (await s.call('GET', '/v1/admin/scheduler')).body.counters;
    // The API's message lands and is answered with the admission; the API dies before the start.
    const [answer] = await scheduler.executeUpdate(submitUpdate, {
      args: [[{ runId, tenant, priority: 'standard', cost: 10, admitNow: true }]],
    });
    expect(answer).toMatchObject({ accepted: true, admission: { runId, attempt: 0 } });
    // The same message again (a retry around a lost answer) is a repeat: never a second lease.
    const [again] = await scheduler.executeUpdate(submitUpdate, {
      args: [[{ runId, tenant, priority: 'standard', cost: 10, admitNow: true }]],
    });
    expect(again).toMatchObject({ accepted: true, duplicate: true });
    expect(again).not.toHaveProperty('admission');
    const expired = await waitFor(
      () => s.call('GET', '/v1/admin/scheduler'),
      (r) => r.body.counters.expired > before.expired,
      60_000,
      250,
    );
    expect(expired.body.counters.expired).toBe(before.expired + 1);
    expect(expired.body.counters.completed).toBe(before.completed);
    expect(expired.body.counters.cancelled).toBe(before.cancelled);
    // The run is started after all (a retry takes the request over under the same id) and checks at once.
    expect(await startBareRun(s, runId, tenant)).toBe('started');
    await s.client.workflow.getHandle(runId).signal(reofferSignal);
    const done = await waitFor(
      () => s.client.workflow.getHandle(runId).describe(),
      (d) => d.status.name === 'COMPLETED',
      120_000,
      500,
    );
    expect(done.status.name).toBe('COMPLETED');
    const after = (await s.call('GET', '/v1/admin/scheduler')).body.counters;
    expect(after.completed).toBe(before.completed + 1);
    expect(after.admitted).toBe(before.admitted + 2);
  });
});

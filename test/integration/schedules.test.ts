import { ScheduleOverlapPolicy } from '@temporalio/client';
import { runSpecQuery } from '../../src/contract/run-messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };
const RUN = { agent: 'synthetic', input: { steps: 1, tokensPerStep: 10 } };

describe('schedules on Temporal Schedules', () => {
  let s: TestStack;
  let key: string;
  let tenant: string;
  beforeAll(async () => {
    s = await startTestStack({ ...FAST, SCHEDULE_MIN_INTERVAL_SECONDS: '1' });
    tenant = `sched-${s.id}`;
    key = await s.tenant(tenant);
  });
  afterAll(async () => {
    await s?.close();
  });

  const view = async (name: string) => (await s.call('GET', `/v1/schedules/${name}`, { token: key })).body;
  const runsOf = async () =>
    (await s.call('GET', `/v1/runs?limit=100`, { token: key })).body.items as {
      runId: string;
      status: string;
    }[];
  /** The outcome a firing's workflow returned (its schedule's recent action). */
  const outcomeOf = (workflowId: string) => s.client.workflow.getHandle(workflowId).result();

  it('fires three times through the scheduler, pauses on drain, resumes on resume', async () => {
    // A tenant's own pause, which neither the drain nor the resume may change.
    const own = await s.call('PUT', '/v1/schedules/held', {
      token: key,
      body: { ...RUN, intervalSeconds: 1, paused: true },
    });
    expect(own.status).toBe(201);
    expect(own.body.paused).toBe('tenant');

    const put = await s.call('PUT', '/v1/schedules/every-second', {
      token: key,
      body: { ...RUN, intervalSeconds: 1, fairnessKey: 'nightly-user' },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(put.body.fairnessKey).toBe('nightly-user');
    expect(put.headers.get('location')).toBe('/v1/schedules/every-second');
    expect(put.body).toMatchObject({ intervalSeconds: 1, overlap: 'skip', paused: null, agent: 'synthetic' });

    // Three firings, each a run the scheduler admitted and that completed (overlap skip: each firing
    // waits for its run, so a firing's run id is the outcome of its workflow).
    const fired = await waitFor(
      () => view('every-second'),
      (v) => v.recentActions.length >= 3,
      30_000,
    );
    const outcomes = await Promise.all(
      fired.recentActions.slice(0, 3).map((a: { workflowId: string }) => outcomeOf(a.workflowId)),
    );
    for (const o of outcomes) expect(o).toMatchObject({ state: 'accepted', finalStatus: 'completed' });
    const firedRuns = outcomes.map((o) => o.runId as string);
    expect(new Set(firedRuns).size).toBe(3);
    // The listing reads Temporal's visibility, which follows a run's completion a little later.
    const runs = await waitFor(
      runsOf,
      (rs) => firedRuns.every((id) => rs.find((r) => r.runId === id)?.status === 'completed'),
      30_000,
    );
    for (const id of firedRuns) expect(runs.find((r) => r.runId === id)?.status).toBe('completed');
    // Each fired run carries the schedule's fairness key (its spec, as a re-drive would read it).
    for (const id of firedRuns)
      expect(await s.client.workflow.getHandle(id).query(runSpecQuery)).toMatchObject({
        fairnessKey: 'nightly-user',
      });
    const viaApi = (await s.call('GET', `/v1/runs/${firedRuns[0]}`, { token: key })).body;
    expect(viaApi).toMatchObject({ tenant, agent: 'synthetic', status: 'completed' });

    // Drain: the schedule is paused by the drain, the tenant's own pause is untouched.
    expect((await s.call('POST', '/v1/admin/drain', { body: { intake: 'refuse' } })).status).toBe(200);
    expect((await view('every-second')).paused).toBe('drain');
    expect((await view('held')).paused).toBe('tenant');
    const trigger = await s.call('POST', '/v1/schedules/every-second/trigger', { token: key });
    expect(trigger.status).toBe(503);
    expect(trigger.body.error.code).toBe('draining');
    const taken = (await view('every-second')).actionsTaken as number;

    // No firing while drained, measured against a witness: a plain Temporal schedule (no Fairway one,
    // so the drain leaves it be) at the same interval, which must take three actions meanwhile.
    const witnessId = `witness-${s.id}`;
    const witness = await s.client.schedule.create({
      scheduleId: witnessId,
      spec: { intervals: [{ every: '1s' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'nobodyServesThis',
        taskQueue: `witness-${s.id}`,
        workflowExecutionTimeout: '5s',
      },
      policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    });
    try {
      await waitFor(
        () => witness.describe(),
        (d) => d.info.numActionsTaken >= 3,
        20_000,
      );
    } finally {
      await witness.delete();
    }
    expect((await view('every-second')).actionsTaken).toBe(taken);

    // Resume: the drain's pause is lifted and the schedule fires again; the tenant's stays.
    expect((await s.call('POST', '/v1/admin/resume')).status).toBe(200);
    expect((await view('every-second')).paused).toBeNull();
    expect((await view('held')).paused).toBe('tenant');
    const resumed = await waitFor(
      () => view('every-second'),
      (v) => v.actionsTaken > taken,
      20_000,
    );
    const last = resumed.recentActions.at(-1).workflowId as string;
    expect(await outcomeOf(last)).toMatchObject({ state: 'accepted', finalStatus: 'completed' });

    // Replaced (200), still its tenant's pause; fired by hand all the same.
    const replaced = await s.call('PUT', '/v1/schedules/held', {
      token: key,
      body: { ...RUN, intervalSeconds: 2, paused: true, overlap: 'allow_all' },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ intervalSeconds: 2, overlap: 'allow_all', paused: 'tenant' });
    expect((await s.call('POST', '/v1/schedules/held/trigger', { token: key })).status).toBe(202);
    const byHand = await waitFor(
      () => view('held'),
      (v) => v.recentActions.length === 1,
      20_000,
    );
    expect(await outcomeOf(byHand.recentActions[0].workflowId)).toMatchObject({ state: 'accepted' });

    const listed = await waitFor(
      async () => (await s.call('GET', '/v1/schedules', { token: key })).body.items as { name: string }[],
      (items) => items.length === 2,
      10_000,
    );
    expect(listed.map((i) => i.name)).toEqual(['every-second', 'held']);
    expect((await s.call('DELETE', '/v1/schedules/every-second', { token: key })).status).toBe(204);
    expect((await s.call('GET', '/v1/schedules/every-second', { token: key })).status).toBe(404);
  });

  it('records a firing the scheduler sheds, with the door’s code, and starts no run', async () => {
    const poor = `sched-poor-${s.id}`;
    const poorKey = await s.tenant(poor, { budget: { tokens: 1, period: 'day' } });
    const put = await s.call('PUT', '/v1/schedules/nightly', {
      token: poorKey,
      body: { ...RUN, cron: '0 3 * * *' },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    expect(put.body.cron).toBe('0 3 * * *');
    expect(put.body.nextActionTimes.length).toBeGreaterThan(0);
    // Well formed, out of range: Temporal's own parser refuses it, and the API answers 400, not 500.
    const range = await s.call('PUT', '/v1/schedules/never', {
      token: poorKey,
      body: { ...RUN, cron: '99 * * * *' },
    });
    expect(range.status, JSON.stringify(range.body)).toBe(400);
    expect(range.body.error.details[0].path).toBe('cron');
    expect((await s.call('POST', '/v1/schedules/nightly/trigger', { token: poorKey })).status).toBe(202);
    const fired = await waitFor(
      async () => (await s.call('GET', '/v1/schedules/nightly', { token: poorKey })).body,
      (v) => v.recentActions.length >= 1,
      20_000,
    );
    const outcome = await outcomeOf(fired.recentActions[0].workflowId);
    expect(outcome).toMatchObject({ state: 'refused', code: 'budget_exhausted' });
    expect(outcome.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((await s.call('GET', `/v1/runs/${outcome.runId}`, { token: poorKey })).status).toBe(404);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { cliStatus, temporalCli } from '../support/cli';
import { expectEffectsOnce, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };

async function submitMany(
  s: TestStack,
  token: string,
  n: number,
  input: Record<string, unknown>,
): Promise<string[]> {
  const replies = await Promise.all(
    Array.from({ length: n }, () =>
      s.call('POST', '/v1/runs', { token, body: { agent: 'synthetic', input } }),
    ),
  );
  expect(replies.map((r) => r.status)).toEqual(Array(n).fill(202));
  return replies.map((r) => r.body.runId as string);
}

describe('the drain switch', () => {
  let s: TestStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('drains and resumes with only the Temporal CLI: refuse at the door, no admissions, in-flight finish', async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '5', ...FAST });
    const stack = s;
    const key = await stack.tenant(`drain-${stack.id}`);
    const wf = stack.config.schedulerWorkflowId;
    const runs = await submitMany(stack, key, 15, { steps: 2, stepMs: 700, tokensPerStep: 10, effect: true });
    await waitFor(
      () => cliStatus(stack.temporalAddress, wf),
      // All slots but the interactive reserve (standard work may not take it).
      (st) => st.inFlight === 5 - st.config.reservedSlots,
      20_000,
    );

    await temporalCli(stack.temporalAddress, ['workflow', 'signal', '--workflow-id', wf, '--name', 'drain']);
    const draining = await waitFor(
      () => cliStatus(stack.temporalAddress, wf),
      (st) => st.mode !== 'open',
      10_000,
    );
    expect(draining.intake).toBe('refuse');
    const admittedAtDrain = draining.counters.admitted as number;
    expect(admittedAtDrain).toBeGreaterThanOrEqual(5 - (draining.config.reservedSlots as number));

    const refused = await stack.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1 } },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('draining');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const drained = await waitFor(
      () => cliStatus(stack.temporalAddress, wf),
      (st) => st.mode === 'drained',
      30_000,
    );
    expect(drained.mode).toBe('drained');
    expect(drained.inFlight).toBe(0);
    // Nothing was admitted while draining, and the in-flight ones finished rather than being yanked.
    expect(drained.counters.admitted).toBe(admittedAtDrain);
    expect(drained.counters.completed).toBe(admittedAtDrain);
    expect(drained.counters.cancelled).toBe(0);
    expect(drained.queued.total).toBe(15 - admittedAtDrain);

    await temporalCli(stack.temporalAddress, ['workflow', 'signal', '--workflow-id', wf, '--name', 'resume']);
    const done = await waitFor(
      () => cliStatus(stack.temporalAddress, wf),
      (st) => st.counters.completed === 15,
      60_000,
    );
    expect(done.mode).toBe('open');
    expect(done.counters.admitted).toBe(15);
    for (const id of runs) {
      const r = await stack.call('GET', `/v1/runs/${id}`, { token: key });
      expect(r.body.status).toBe('completed');
    }
    // Counted where they land: the sink, the simulator's call log, the effect step's runs.
    await expectEffectsOnce(stack, 15);
  });

  it('holds new work at the door (202, queued, not admitted) and releases it on resume, through the API', async () => {
    s = await startTestStack(FAST);
    const key = await s.tenant(`hold-${s.id}`);
    const drain = await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } });
    expect(drain.status).toBe(200);
    expect(drain.body).toMatchObject({ mode: 'drained', intake: 'hold' });

    const [runId] = await submitMany(s, key, 1, { steps: 1 });
    const held = await s.call('GET', `/v1/runs/${runId}`, { token: key });
    expect(held.body.status).toBe('queued');
    expect(held.body.waitingOn.code).toBe('draining');
    // Three admission passes while held, each after the fleet was given more room: a settings
    // update ends in the scheduler's admission pass (the same workflow task), and its answer comes
    // once that task is done.
    const before = (await s.call('GET', '/v1/admin/scheduler')).body;
    for (let i = 1; i <= 3; i++) {
      const patched = await s.call('PATCH', '/v1/admin/scheduler', {
        body: { concurrency: (before.config.concurrency as number) + i },
      });
      expect(patched.status).toBe(200);
    }
    const after = (await s.call('GET', '/v1/admin/scheduler')).body;
    expect(after.history.length).toBeGreaterThan(before.history.length);
    expect(after.counters.admitted).toBe(0);
    expect((await s.call('GET', `/v1/runs/${runId}`, { token: key })).body.status).toBe('queued');

    const resumed = await s.call('POST', '/v1/admin/resume');
    expect(resumed.body.mode).toBe('open');
    const done = await waitFor(
      () => s!.call('GET', `/v1/runs/${runId}`, { token: key }),
      (r) => r.body.status === 'completed',
      20_000,
    );
    expect(done.body.status).toBe('completed');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newChainAfter, terminateScheduler } from '../../bench/lib/scheduler-loss';
import { cliStatus } from '../support/cli';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const REOFFER_MAX_SECONDS = 3;

/**
 * Issue 27, finding 3: the drain (with its intake) and the runtime settings live outside the chain,
 * in the API's store, and every new chain starts from them. Losing the scheduler while drained with
 * intake `hold` must not admit the held run, and a patched concurrency must survive.
 */
describe('a drain and runtime settings survive the loss of the scheduler (real dev server, CLI)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({
      FLEET_CONCURRENCY: '4',
      LEASE_TTL_SECONDS: '10',
      RUN_REOFFER_FIRST_SECONDS: '2',
      RUN_REOFFER_MAX_SECONDS: String(REOFFER_MAX_SECONDS),
      SCHEDULER_WATCHDOG_SECONDS: '1',
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
    });
    // Every watchdog (the API's, the worker's) takes its first look at the chain within a tick: one
    // whose first look is at the successor cannot tell it is new (the API then re-sends its tenants
    // only when one submits).
    await new Promise((r) => setTimeout(r, 2_500));
  });
  afterAll(() => s?.close());

  const scheduler = () => s.client.workflow.getHandle(s.config.schedulerWorkflowId);
  const status = async () => {
    const r = await s.call('GET', '/v1/admin/scheduler');
    return r.status === 200 ? r.body : undefined;
  };

  it('drained with hold and patched, the scheduler is terminated: nothing is admitted until resume', async () => {
    const key = await s.tenant(`held-${s.id}`);
    const drained = await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } });
    expect(drained.body).toMatchObject({ mode: 'drained', intake: 'hold' });
    const patched = await s.call('PATCH', '/v1/admin/scheduler', { body: { concurrency: 7 } });
    expect(patched.body.config.concurrency).toBe(7);

    const submitted = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1, effect: true } },
    });
    expect(submitted.status).toBe(202);
    const runId = submitted.body.runId as string;
    const run = () => s.call('GET', `/v1/runs/${runId}`, { token: key }).then((r) => r.body);
    expect(await run()).toMatchObject({ status: 'queued', waitingOn: { code: 'draining' } });

    const before = await scheduler().describe();
    const lostAt = Date.now();
    await terminateScheduler(s.config.temporal.address!, s.config.schedulerWorkflowId, before.runId);
    const { runId: chain } = await newChainAfter(() => scheduler().describe(), before.runId!, lostAt);

    // The held run offers itself to the new chain (the watchdog nudges it, or its own backoff):
    // either the chain holds it, or (the defect) admits it. A check the worker had in flight to the
    // terminated run can hold its checks for about half a minute, hence the long wait.
    const first = await waitFor(
      status,
      (st) => (st?.queued?.total ?? 0) >= 1 || (st?.counters?.admitted ?? 0) > 0,
      90_000,
      200,
    );
    expect(first).toMatchObject({ mode: 'drained', intake: 'hold', queued: { total: 1 } });
    expect(first!.counters.admitted).toBe(0);
    expect(first!.config.concurrency).toBe(7);

    // A window of several status reads on the new chain, over two of the run's re-offer intervals,
    // each ending an admission pass of its own (a settings patch answers after the chain's pass):
    // the chain is alive, the unit queued, nothing admitted.
    const windowEnds = Date.now() + 2 * REOFFER_MAX_SECONDS * 1000;
    let reads = 0;
    for (let batch = 0.04; reads < 5 || Date.now() < windowEnds; batch = Math.max(0.01, batch - 0.005)) {
      const d = await scheduler().describe();
      expect(d.status.name).toBe('RUNNING');
      expect(d.runId).toBe(chain);
      const st = (await s.call('PATCH', '/v1/admin/scheduler', { body: { floors: { batch } } })).body;
      expect(st).toMatchObject({ mode: 'drained', intake: 'hold', queued: { total: 1 } });
      expect(st.counters.admitted).toBe(0);
      expect(await run()).toMatchObject({ status: 'queued', waitingOn: { code: 'draining' } });
      reads++;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(reads).toBeGreaterThanOrEqual(5);

    // The API and the Temporal CLI read the same state.
    const api = await status();
    const cli = await cliStatus(s.config.temporal.address!, s.config.schedulerWorkflowId);
    for (const st of [api, cli]) {
      expect(st).toMatchObject({ mode: 'drained', intake: 'hold' });
      expect(st.config.concurrency).toBe(7);
    }
    expect(cli.config).toEqual(api.config);

    const resumed = await s.call('POST', '/v1/admin/resume');
    expect(resumed.body).toMatchObject({ mode: 'open', intake: 'open' });
    const done = await waitFor(run, (v) => v?.status === 'completed', 60_000, 250);
    expect(done.status).toBe('completed');
  });

  it('a resume survives a loss too: the next chain starts open, with the patched settings', async () => {
    const key = await s.tenant(`open-${s.id}`);
    await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } });
    await s.call('POST', '/v1/admin/resume');
    const before = await scheduler().describe();
    const lostAt = Date.now();
    await terminateScheduler(s.config.temporal.address!, s.config.schedulerWorkflowId, before.runId);
    await newChainAfter(() => scheduler().describe(), before.runId!, lostAt);
    const st = await waitFor(status, (x) => x !== undefined, 30_000, 200);
    expect(st).toMatchObject({ mode: 'open', intake: 'open' });
    expect(st!.config.concurrency).toBe(7);
    const r = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1 } },
    });
    expect(r.status).toBe(202);
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${r.body.runId as string}`, { token: key }).then((x) => x.body),
      (v) => v?.status === 'completed',
      60_000,
      250,
    );
    expect(done.status).toBe('completed');
  });
});

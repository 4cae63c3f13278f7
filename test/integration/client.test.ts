import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, FairwayError, type FairwayClient } from '../../src/client';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * The typed client (`fairway/client`) against a real stack (API, worker, simulator, the shared dev
 * server), on the built-in agents: what a user of the package sees.
 */
describe('the typed client against a real stack', () => {
  let s: TestStack;
  let fairway: FairwayClient;
  beforeAll(async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '4' });
    fairway = createClient({ baseUrl: s.apiUrl!, apiKey: await s.tenant('client-it') });
  });
  afterAll(async () => {
    await s?.close();
  });

  const catchOf = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('expected a FairwayError');
      },
      (e: unknown) => {
        expect(e).toBeInstanceOf(FairwayError);
        return e as FairwayError;
      },
    );

  it('starts a run, waits for its result, and finds it in the list', async () => {
    const run = await fairway.runs.start(
      'synthetic',
      { steps: 2, tokensPerStep: 20 },
      { priority: 'interactive' },
    );
    expect(await run.result({ timeoutMs: 120_000 })).toMatchObject({ steps: 2 });
    const view = await run.get();
    expect(view).toMatchObject({
      runId: run.runId,
      agent: 'synthetic',
      priority: 'interactive',
      status: 'completed',
    });
    expect(view.usage.tokens).toBeGreaterThanOrEqual(40);
    const page = await fairway.runs.list({ status: 'completed', limit: 50 });
    expect(page.items.map((r) => r.runId)).toContain(run.runId);
  });

  it('the same idempotency key names the same run', async () => {
    const key = `client-it-${s.id}`;
    const a = await fairway.runs.start('synthetic', { steps: 1 }, { idempotencyKey: key });
    const b = await fairway.runs.start('synthetic', { steps: 1 }, { idempotencyKey: key });
    expect(b.runId).toBe(a.runId);
    const other = await catchOf(fairway.runs.start('synthetic', { steps: 2 }, { idempotencyKey: key }));
    expect(other).toMatchObject({ status: 422, code: 'idempotency_conflict' });
    await a.result({ timeoutMs: 120_000 });
  });

  it('approves a gated run (triage) and gets its result', async () => {
    const run = await fairway.runs.start('triage', { incident: 'disk full on db-1' });
    expect((await run.waitFor('awaiting_approval', { timeoutMs: 120_000 })).status).toBe('awaiting_approval');
    expect(await run.approve('go ahead')).toMatchObject({ runId: run.runId, decision: 'approved' });
    expect(await run.result({ timeoutMs: 120_000 })).toMatchObject({
      resolution: 'remediated',
      note: 'go ahead',
    });
    // Too late to decide again: 409 conflict.
    expect(await catchOf(run.reject())).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('cancels a run: result() throws run_cancelled', async () => {
    const run = await fairway.runs.start('synthetic', { steps: 50, tokensPerStep: 10, stepMs: 1000 });
    await run.waitFor('running', { timeoutMs: 120_000 });
    expect(await run.cancel()).toMatchObject({ runId: run.runId, cancelRequested: true });
    const err = await catchOf(run.result({ timeoutMs: 120_000 }));
    expect(err).toMatchObject({ code: 'run_cancelled', status: 0 });
    expect(err.run?.status).toBe('cancelled');
  });

  it('a failing run: result() throws run_failed with the run and its error', async () => {
    const run = await fairway.runs.start('synthetic', { steps: 2, failAtStep: 1 });
    const err = await catchOf(run.result({ timeoutMs: 120_000 }));
    expect(err.code).toBe('run_failed');
    expect(err.run?.error?.code).toBeTruthy();
  });

  it('answers errors as FairwayError: 400 with the field path, 404 unknown_agent, 404 not_found, 401', async () => {
    const bad = await catchOf(fairway.runs.start('synthetic', { steps: 'many' }));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(bad.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'input.steps' })]));
    expect(await catchOf(fairway.runs.start('no-such-agent', {}))).toMatchObject({
      status: 404,
      code: 'unknown_agent',
    });
    expect(await catchOf(fairway.runs.get('run-client-it-00000000000000000000'))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    const stranger = createClient({ baseUrl: s.apiUrl!, apiKey: 'not-a-key' });
    expect(await catchOf(stranger.runs.list())).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('creates a batch and reads its counts', async () => {
    const batch = await fairway.batches.create('synthetic', [{ steps: 1 }, { steps: 1 }, { steps: 1 }]);
    expect(batch.total).toBe(3);
    const deadline = Date.now() + 120_000;
    let view = await fairway.batches.get(batch.batchId);
    while (view.completed < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      view = await fairway.batches.get(batch.batchId);
    }
    expect(view).toMatchObject({ batchId: batch.batchId, total: 3, completed: 3, failed: 0 });
  });

  // GET /v1/agents, GET /v1/approvals and the gate's proposal and approver are issue 28's server side.
  it('lists the agents with their input schemas, and the gates waiting with their proposal and approver', async () => {
    const agents = await fairway.agents.list();
    expect(agents.items.map((a) => a.name)).toEqual(expect.arrayContaining(['synthetic', 'triage', 'audit']));
    expect(agents.items.find((a) => a.name === 'triage')?.input).toMatchObject({ type: 'object' });
    expect((await fairway.agents.get('synthetic')).input).toMatchObject({ required: ['steps'] });
    expect(await catchOf(fairway.agents.get('no-such-agent'))).toMatchObject({
      status: 404,
      code: 'unknown_agent',
    });

    const run = await fairway.runs.start('triage', { incident: 'cert expiring' });
    await run.waitFor('awaiting_approval', { timeoutMs: 120_000 });
    // The list reads Temporal visibility, which catches up with the run's own view shortly after.
    const waiting = await waitFor(
      () => fairway.approvals.list(),
      (page) => page.items.some((a) => a.runId === run.runId),
    );
    const mine = waiting.items.find((a) => a.runId === run.runId);
    expect(mine?.agent).toBe('triage');
    expect(mine?.proposal).toEqual((await run.get()).gate?.proposal);
    expect(mine?.proposal).not.toBeNull();
    await run.reject('not now');
    const err = await catchOf(run.result({ timeoutMs: 120_000 }));
    expect(err.code).toBe('run_rejected');
    expect(err.run?.gate).toMatchObject({ decision: 'reject', note: 'not now' });
    expect(err.run?.gate?.decidedBy).toMatch(/^key:client-it#[0-9a-f]{12}$/);
    const after = await waitFor(
      () => fairway.approvals.list(),
      (page) => !page.items.some((a) => a.runId === run.runId),
    );
    expect(after.items.map((a) => a.runId)).not.toContain(run.runId);
  });
});

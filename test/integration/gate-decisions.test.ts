import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decisionSignal } from '../../src/contract/run-messages';
import { REGATE_MODULE, startRegateWorker } from '../support/regate-worker';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * A decision names the gate it decides: a run that gates again after a rejection takes no late or
 * repeated decision meant for its first gate as the decision on its second (real dev server, HTTP).
 */
describe('decisions of a run that gates again (real dev server)', () => {
  let s: TestStack;
  let worker: { close(): Promise<void> } | undefined;
  let key: string;
  beforeAll(async () => {
    s = await startTestStack({ AGENTS: REGATE_MODULE });
    worker = await startRegateWorker(s);
    key = await s.tenant('acme');
  }, 180_000);
  afterAll(async () => {
    await worker?.close();
    await s?.close();
  });

  const view = (runId: string) => s.call('GET', `/v1/runs/${runId}`, { token: key });
  const decide = (runId: string, decision: 'approve' | 'reject', body: unknown) =>
    s.call('POST', `/v1/runs/${runId}/${decision}`, { token: key, body });
  /** The run's view once it waits at the gate of its `attempt`. */
  const atGate = (runId: string, attempt: number) =>
    waitFor(
      () => view(runId),
      (v) => v.body?.status === 'awaiting_approval' && v.body?.gate?.proposal?.attempt === attempt,
      120_000,
    );
  const listed = (runId: string) =>
    waitFor(
      () => s.call('GET', '/v1/approvals', { token: key }),
      (v) => (v.body?.items ?? []).some((i: { runId: string }) => i.runId === runId),
    ).then((v) => v.body.items.find((i: { runId: string }) => i.runId === runId));

  it("answers 409 to gate 1's retried or late decision at gate 2, which it leaves undecided", async () => {
    const r = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'regate', input: { gates: 3 } },
    });
    expect(r.status).toBe(202);
    const runId = r.body.runId as string;
    await atGate(runId, 1);
    expect(await listed(runId)).toMatchObject({ proposal: { attempt: 1 } });

    // A client of before gate ids: at a run's first gate, a decision naming none decides it.
    const rejected = await decide(runId, 'reject', { note: 'not this one' });
    expect(rejected.status).toBe(200);
    const second = await atGate(runId, 2);
    expect(second.body.gate.decision).toBeUndefined();

    // The HTTP retry of gate 1's reject, and a late approve naming gate 1: neither decides gate 2.
    const retried = await decide(runId, 'reject', { note: 'not this one' });
    expect(retried.status).toBe(409);
    expect(retried.body.error).toMatchObject({
      code: 'conflict',
      details: { status: 'awaiting_approval', openGateId: 2 },
    });
    const late = await decide(runId, 'approve', { gateId: 1 });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'conflict', details: { openGateId: 2 } });
    const still = await view(runId);
    expect(still.body.status).toBe('awaiting_approval');
    expect(still.body.gate).toMatchObject({ gateId: 2, proposal: { attempt: 2 } });
    expect(still.body.gate.decision).toBeUndefined();
    expect(rejected.body.gateId).toBe(1);
    expect(await listed(runId)).toMatchObject({ gateId: 2, proposal: { attempt: 2 } });

    // A decision for gate 1 that overtakes the API's check reaches the run, which ignores it: the
    // decision that follows it is the one the run takes (signals arrive in order).
    await s.client.workflow
      .getHandle(runId)
      .signal(decisionSignal, { decision: 'reject', gateId: 1, by: 'raced' });
    const approved = await decide(runId, 'approve', { gateId: 2, note: 'yes, this one' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ gateId: 2, decision: 'approved' });
    // A double click on gate 2's approve: the run no longer waits.
    expect((await decide(runId, 'approve', { gateId: 2 })).status).toBe(409);
    const done = await waitFor(
      () => view(runId),
      (v) => ['completed', 'failed'].includes(v.body?.status as string),
      120_000,
    );
    expect(done.body.status).toBe('completed');
    expect(done.body.result.verdicts).toEqual([`reject:${rejected.body.by}`, `approve:${approved.body.by}`]);
  }, 300_000);
});

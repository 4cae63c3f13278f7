import { describe, expect, it } from 'vitest';
import { awaitingEvent } from '../../../src/api/webhooks/run-events';
import { eventIdOf } from '../../../src/api/webhooks/signing';
import type { RunExecution } from '../../../src/contract/run-events';

const waiting = (gateSeq?: number): RunExecution => ({
  runId: 'run-acme-1',
  executionId: 'x1',
  tenant: 'acme',
  agent: 'triage',
  priority: 'standard',
  batchId: null,
  status: 'awaiting_approval',
  end: 'running',
  closedAt: null,
  ...(gateSeq !== undefined ? { gateSeq } : {}),
});

describe('the event of a run waiting at a gate', () => {
  it('has an id of its own for each gate of the execution, the same for the same gate', () => {
    const ids = [1, 2, 3].map((g) => awaitingEvent(waiting(g), 0).eventId);
    expect(new Set(ids).size).toBe(3);
    expect(awaitingEvent(waiting(2), 99).eventId).toBe(ids[1]);
  });

  it("keeps a first gate's id from before gates were numbered, so it is not announced again", () => {
    const before = eventIdOf('acme', 'run.awaiting_approval', 'run-acme-1', 'x1');
    expect(awaitingEvent(waiting(), 0).eventId).toBe(before);
    expect(awaitingEvent(waiting(1), 0).eventId).toBe(before);
  });

  it("names the gate in its data, for the receiver's decision", () => {
    expect(JSON.parse(awaitingEvent(waiting(2), 0).body).data).toMatchObject({
      runId: 'run-acme-1',
      gateId: 2,
    });
    expect(JSON.parse(awaitingEvent(waiting(), 0).body).data.gateId).toBeUndefined();
  });
});

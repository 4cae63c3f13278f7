import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import type { EffectStore } from '../../../src/activities/effect-store';
import type { SchedulerMailbox } from '../../../src/activities/mailbox';
import type { ModelClient } from '../../../src/activities/model-client';
import type { Charge } from '../../../src/scheduler';

/** The model step with a counting provider and mailbox: what is called, charged and checkpointed. */
function harness() {
  const calls: { runId: string; step: number; tokens: number }[] = [];
  const charges: Charge[] = [];
  const model: ModelClient = {
    complete: async (req) => {
      calls.push({ runId: req.runId, step: req.step, tokens: req.tokens });
      return { usedTokens: req.tokens, latencyMs: 1 };
    },
  };
  const mailbox = { renew: () => undefined, charge: (c: Charge) => void charges.push(c) };
  const activities = createActivities({
    client: {} as Client,
    startRun: async () => 'started',
    discardRun: async () => undefined,
    recoverUsage: async () => ({ usage: [], activeRuns: 0, scanned: 0, truncated: false }),
    schedulerId: 'scheduler-test',
    mailbox: mailbox as unknown as SchedulerMailbox,
    model,
    effects: {} as EffectStore,
    log: pino({ level: 'silent' }),
  });
  return { activities, calls, charges };
}

const req = {
  runId: 'run-a-00000000000000000001',
  tenant: 'a',
  attempt: 0,
  step: 1,
  tokens: 300,
  minMs: 0,
  usedSoFar: 0,
  leaseTtlMs: 60_000,
};

describe('modelStep', () => {
  it('calls once, charges what was billed, and checkpoints the bill in its heartbeat', async () => {
    const h = harness();
    const env = new MockActivityEnvironment({ isLocal: false, attempt: 1 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    await expect(env.run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 300 });
    expect(h.calls).toHaveLength(1);
    expect(h.charges).toEqual([{ runId: req.runId, attempt: 0, perCall: true, tenant: 'a', tokens: 300 }]);
    expect(beats).toContainEqual({ billedTokens: 300 });
  });

  it('a retried regular step whose earlier attempt was billed does not call (or charge) again', async () => {
    const h = harness();
    const env = new MockActivityEnvironment({
      isLocal: false,
      attempt: 2,
      heartbeatDetails: { billedTokens: 280 },
    });
    await expect(env.run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 280 });
    expect(h.calls).toHaveLength(0);
    expect(h.charges).toHaveLength(0);
  });

  it('a retry without a billed checkpoint calls again (a 429 or 5xx was never billed)', async () => {
    const h = harness();
    const env = new MockActivityEnvironment({ isLocal: false, attempt: 2, heartbeatDetails: undefined });
    await expect(env.run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 300 });
    expect(h.calls).toHaveLength(1);
    expect(h.charges).toHaveLength(1);
  });
});

import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { CallCharges } from '../../../src/activities/call-charges';
import { openSqliteCallIntents } from '../../../src/stores/call-intents/call-intents-sqlite';
import type { CallIntentStore } from '../../../src/stores/call-intents/call-intents';
import type { EffectStore } from '../../../src/stores/effects/effect-store';
import type { SchedulerMailbox } from '../../../src/activities/mailbox';
import type { ModelClient } from '../../../src/activities/model-client';
import { stepWorstCase } from '../../../src/contract/model-call';
import { ownerId } from '../../../src/scheduler';
import type { Charge } from '../../../src/scheduler';
import type { UsageSource } from '../../../src/activities/usage-source';

const log = pino({ level: 'silent' });
const stores: CallIntentStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/**
 * The model step with a counting provider and mailbox, and a real (in-memory) call intent store:
 * what is called, recorded, charged and checkpointed.
 */
function harness(answer?: () => Promise<number>, usage?: UsageSource) {
  const calls: { runId: string; step: number; tokens: number; rowsBefore: number }[] = [];
  const charges: { charge: Charge; keys: readonly string[] }[] = [];
  const intents = openSqliteCallIntents(':memory:');
  stores.push(intents);
  const model: ModelClient = {
    complete: async (req) => {
      const { unsettled } = await intents.counts();
      calls.push({ runId: req.runId, step: req.step, tokens: req.tokens, rowsBefore: unsettled });
      return { usedTokens: answer ? await answer() : req.tokens, latencyMs: 1 };
    },
  };
  const mailbox = {
    renew: () => undefined,
    charge: ({ key, ...charge }: Charge) =>
      void charges.push({ charge, keys: key === undefined ? [] : [key] }),
    confirm: () => undefined,
    fence: () => undefined,
  };
  const ledger = new CallCharges(
    intents,
    mailbox,
    { ownerDeadMs: 30_000, sweepMs: 10_000, keepSettledMs: 0 },
    log,
    Date.now,
    usage,
  );
  const activities = createActivities({
    client: {} as Client,
    startRun: async () => 'started',
    discardRun: async () => undefined,
    recoverUsage: async () => ({ usage: [], activeRuns: 0, scanned: 0, truncated: false }),
    schedulerId: 'scheduler-test',
    mailbox: mailbox as unknown as SchedulerMailbox,
    calls: ledger,
    model,
    effects: {} as EffectStore,
    log,
  });
  return { activities, calls, charges, intents, ledger };
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
const worst = stepWorstCase(req.runId, req.step, req.tokens);

describe('modelStep', () => {
  it('records the call before it goes, charges what was billed with its key, and checkpoints the bill', async () => {
    const h = harness();
    const env = new MockActivityEnvironment({ isLocal: false, attempt: 1 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    await expect(env.run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 300 });
    expect(h.calls).toMatchObject([{ rowsBefore: 1 }]);
    expect(h.charges).toHaveLength(1);
    expect(h.charges[0]!.charge).toEqual({
      runId: req.runId,
      attempt: 0,
      perCall: true,
      tenant: 'a',
      tokens: 300,
      owner: ownerId(h.ledger.owner),
    });
    expect(h.charges[0]!.keys).toHaveLength(1);
    expect(beats).toContainEqual({ billedTokens: 300 });
    // The row waits for the report's delivery: only `settle` ends it.
    expect(await h.intents.counts()).toEqual({ rows: 1, unsettled: 1 });
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
    expect(await h.intents.counts()).toEqual({ rows: 0, unsettled: 0 });
  });

  it('a retry without a billed checkpoint calls again (a 429 or 5xx was never billed)', async () => {
    const h = harness();
    const env = new MockActivityEnvironment({ isLocal: false, attempt: 2, heartbeatDetails: undefined });
    await expect(env.run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 300 });
    expect(h.calls).toHaveLength(1);
    expect(h.charges).toHaveLength(1);
  });

  it('a local step run again (its workflow task lost after the call) answers the first bill: one call, one charge', async () => {
    const h = harness(async () => 280);
    const local = () => new MockActivityEnvironment({ isLocal: true, attempt: 1 });
    await expect(local().run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 280 });
    await expect(local().run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 280 });
    expect(h.calls).toHaveLength(1);
    expect(h.charges.map((c) => c.charge.tokens)).toEqual([280]);
    expect(await h.intents.counts()).toEqual({ rows: 1, unsettled: 1 });
    // Another step, or the same step under the run's next lease attempt, is a call of its own.
    await local().run(h.activities.modelStep, { ...req, step: 2 });
    await local().run(h.activities.modelStep, { ...req, attempt: 1 });
    expect(h.calls).toHaveLength(3);
    expect(h.charges).toHaveLength(3);
  });

  it("a step run again after a cut call does not call again: it answers that call's charge, or the bill the provider reports", async () => {
    let cut = true;
    const h = harness(() => (cut ? Promise.reject(new Error('socket hang up')) : Promise.resolve(300)));
    const local = () => new MockActivityEnvironment({ isLocal: true, attempt: 1 });
    await expect(local().run(h.activities.modelStep, req)).rejects.toThrow('socket hang up');
    cut = false;
    // Its outcome unknown, the cut call is charged its worst case; the re-run answers that charge.
    await expect(local().run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: worst });
    expect(h.calls).toHaveLength(1);
    expect(h.charges.map((c) => c.charge.tokens)).toEqual([worst]);

    const served = harness(() => (cut ? Promise.reject(new Error('socket hang up')) : Promise.resolve(300)), {
      lookup: async () => ({ served: true, tokens: 250 }),
    });
    cut = true;
    await expect(local().run(served.activities.modelStep, req)).rejects.toThrow('socket hang up');
    cut = false;
    await expect(local().run(served.activities.modelStep, req)).resolves.toEqual({ usedTokens: 250 });
    expect(served.calls).toHaveLength(1);
    expect(served.charges.map((c) => c.charge.tokens)).toEqual([worst]);
  });

  it('a step whose earlier call was refused (429) calls again', async () => {
    let refuse = true;
    const h = harness(() =>
      refuse
        ? Promise.reject(ApplicationFailure.create({ type: 'ModelThrottled', message: 'throttled' }))
        : Promise.resolve(300),
    );
    const local = () => new MockActivityEnvironment({ isLocal: true, attempt: 1 });
    await expect(local().run(h.activities.modelStep, req)).rejects.toThrow('throttled');
    refuse = false;
    await expect(local().run(h.activities.modelStep, req)).resolves.toEqual({ usedTokens: 300 });
    expect(h.calls).toHaveLength(2);
    expect(h.charges.map((c) => c.charge.tokens)).toEqual([300]);
  });

  it('a call the provider refused (429) leaves no row and charges nothing', async () => {
    const h = harness(() =>
      Promise.reject(ApplicationFailure.create({ type: 'ModelThrottled', message: 'throttled' })),
    );
    const env = new MockActivityEnvironment({ isLocal: true, attempt: 1 });
    await expect(env.run(h.activities.modelStep, req)).rejects.toThrow('throttled');
    expect(h.charges).toHaveLength(0);
    expect(await h.intents.counts()).toEqual({ rows: 0, unsettled: 0 });
  });

  it('a call whose outcome is unknown (cut mid-flight) is charged its worst case', async () => {
    const h = harness(() => Promise.reject(new Error('socket hang up')));
    const env = new MockActivityEnvironment({ isLocal: true, attempt: 1 });
    await expect(env.run(h.activities.modelStep, req)).rejects.toThrow('socket hang up');
    expect(h.charges.map((c) => c.charge.tokens)).toEqual([worst]);
    expect(h.charges[0]!.keys).toHaveLength(1);
  });
});

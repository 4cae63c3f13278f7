import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCharges } from '../../../src/activities/call-charges';
import { createChatClient } from '../../../src/activities/chat-client';
import { modelCallActivities } from '../../../src/activities/model-call';
import { openSqliteCallIntents } from '../../../src/stores/call-intents/call-intents-sqlite';
import type {
  ModelCallMeasure,
  ModelCallRequest,
  ModelCallResult,
} from '../../../src/contract/activity-types';
import type { Charge } from '../../../src/scheduler';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import { simulateCompletion } from '../../../src/standins/modelplane/completions';

const log = pino({ level: 'silent' });
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** The model-call activities over the simulator, a real in-memory call ledger and a counting mailbox. */
async function harness(baseMs = 0) {
  const sim: RunningSimulator = await startSimulator({
    tpm: 1_000_000,
    rpm: 10_000,
    seed: 5,
    port: 0,
    latency: { baseMs, perTokenMs: 0 },
  });
  const intents = openSqliteCallIntents(':memory:');
  closers.push(
    () => sim.close().catch(() => undefined),
    () => intents.close(),
  );
  const charges: Charge[] = [];
  const renewals: number[] = [];
  const mailbox = {
    renew: (r: { usedTokens: number }) => void renewals.push(r.usedTokens),
    charge: ({ key: _key, ...c }: Charge) => void charges.push(c),
    confirm: () => undefined,
    fence: () => undefined,
  };
  const calls = new CallCharges(
    intents,
    mailbox,
    { ownerDeadMs: 30_000, sweepMs: 10_000, keepSettledMs: 0 },
    log,
  );
  const chat = createChatClient({
    endpoints: [
      { name: 'sim-gpt', dialect: 'openai', baseUrl: sim.url },
      { name: 'sim-claude', dialect: 'anthropic', baseUrl: sim.url },
    ],
    defaultModel: 'sim-gpt',
    onObservation: () => undefined,
  });
  const acts = modelCallActivities({
    chat: () => chat,
    calls: () => calls,
    mailbox,
    tenantOf: async () => 'acme',
    log,
  });
  return { sim, acts, charges, renewals, intents };
}

const call = (model: string, reserved?: number): ModelCallRequest => ({
  tenant: 'acme',
  runId: 'run-acme-1',
  attempt: 0,
  step: model === 'sim-gpt' ? 1 : 2,
  usedSoFar: 10,
  leaseTtlMs: 60_000,
  request: { model, messages: [{ role: 'user', content: 'Draft the summary.' }], maxTokens: 64 },
  ...(reserved !== undefined ? { reserved } : {}),
});

describe('modelCall', () => {
  it('returns the completion in both dialects, charged exactly what the provider billed', async () => {
    const h = await harness();
    const env = new MockActivityEnvironment({ isLocal: false });
    for (const model of ['sim-gpt', 'sim-claude']) {
      const measured = (await env.run(h.acts.measureModelCall, call(model).request)) as ModelCallMeasure;
      expect(measured).toMatchObject({ model, dialect: model === 'sim-gpt' ? 'openai' : 'anthropic' });
      const r = (await env.run(h.acts.modelCall, call(model, measured.worstCaseTokens))) as ModelCallResult;
      expect(r.completion.text).toBe(simulateCompletion(call(model).request, model).text);
      expect(r.reservedTokens).toBe(measured.worstCaseTokens);
      expect(r.completion.usage.totalTokens).toBeLessThanOrEqual(r.reservedTokens);
    }
    const charged = h.charges.reduce((n, c) => n + c.tokens, 0);
    expect(charged).toBe(h.sim.state.billOf('acme'));
    expect(h.charges.every((c) => c.tenant === 'acme' && c.runId === 'run-acme-1')).toBe(true);
    expect(await h.intents.counts()).toEqual({ rows: 2, unsettled: 2 });
    expect(h.renewals.at(-1)).toBe(10 + h.charges[1]!.tokens);
  });

  it('refuses a call whose worst case exceeds its reservation, before it goes', async () => {
    const h = await harness();
    const env = new MockActivityEnvironment({ isLocal: false });
    const err = await env.run(h.acts.modelCall, call('sim-gpt', 5)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('ModelReservationShort');
    expect(h.sim.state.stats().calls).toBe(0);
    expect(await h.intents.counts()).toEqual({ rows: 0, unsettled: 0 });
  });

  it('charges a call the provider refused to connect nothing', async () => {
    const h = await harness();
    const env = new MockActivityEnvironment({ isLocal: false });
    await h.sim.close();
    await expect(env.run(h.acts.modelCall, call('sim-gpt'))).rejects.toThrow(/unreachable/);
    expect(h.charges).toEqual([]);
    expect(await h.intents.counts()).toEqual({ rows: 0, unsettled: 0 });
  });

  it('charges a call cut mid-flight its worst case (over the bill, never under)', async () => {
    const h = await harness(3000);
    const env = new MockActivityEnvironment({ isLocal: false });
    const measured = (await env.run(h.acts.measureModelCall, call('sim-claude').request)) as ModelCallMeasure;
    const running = env.run(h.acts.modelCall, call('sim-claude'));
    // Cut once the provider has billed the call, its answer still 3 s away.
    for (let i = 0; i < 500 && h.sim.state.billOf('acme') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(h.sim.state.billOf('acme'), 'billed before the cut').toBeGreaterThan(0);
    env.cancel();
    await expect(running).rejects.toThrow();
    expect(h.charges).toMatchObject([{ tenant: 'acme', tokens: measured.worstCaseTokens }]);
    expect(h.sim.state.billOf('acme')).toBeLessThanOrEqual(measured.worstCaseTokens);
  });

  it('names an unknown model as a refusal', async () => {
    const h = await harness();
    const env = new MockActivityEnvironment({ isLocal: false });
    const err = await env.run(h.acts.modelCall, call('nope')).catch((e: unknown) => e);
    expect((err as ApplicationFailure).type).toBe('ModelUnknown');
  });
});

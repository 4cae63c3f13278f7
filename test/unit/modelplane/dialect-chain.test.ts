import type { Client } from '@temporalio/client';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerMailbox } from '../../../src/activities/mailbox';
import { createModelClient } from '../../../src/activities/model-client';
import { PoolObservations } from '../../../src/activities/observations';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import type { WorkerReport } from '../../../src/contract/scheduler-messages';
import { applyReport } from '../../../src/workflows/scheduler-support';
import { handClock, stormCore } from './sim-client';

/**
 * Both rate-limit header dialects, through the whole path a worker's model calls take to the
 * governor: the simulator's HTTP answers, the model client's parsing, the observation window, the
 * mailbox's report update (JSON, as Temporal's converter carries it) and the scheduler's report
 * handler over the real policy core. The integration storm runs end to end in one dialect; this
 * proves the other reaches the governor with the same figures (`npm run bench -- storm` runs either
 * at full size with SIM_HEADER_DIALECT).
 */
const TPM = 60_000;

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function chain(dialect: 'openai' | 'anthropic') {
  const clock = handClock();
  sim = await startSimulator({
    tpm: TPM,
    rpm: 100_000,
    seed: 3,
    latency: { baseMs: 0, perTokenMs: 0 },
    now: clock.now,
    port: 0,
    headerDialect: dialect,
  });
  const window = new PoolObservations();
  const client = createModelClient({
    baseUrl: sim.url,
    model: 'sim-1',
    onObservation: (x) => window.add(x),
    now: clock.now,
  });
  // The mailbox's only use of Temporal is one report update to the scheduler: record what it would carry.
  const reports: WorkerReport[] = [];
  const temporal = {
    workflow: {
      getHandle: () => ({
        executeUpdate: async (_update: unknown, o: { args: [WorkerReport] }) => {
          reports.push(JSON.parse(JSON.stringify(o.args[0])) as WorkerReport);
        },
      }),
    },
  } as unknown as Client;
  const mailbox = new SchedulerMailbox(
    temporal,
    'scheduler',
    3_600_000,
    () => window.drain(clock.now()),
    pino({ level: 'silent' }),
  );
  const core = stormCore({ initialTokensPerMinute: 100_000, quotaShare: 0.95 }, clock.now());
  /** Flushes the mailbox and hands its report to the scheduler's handler; the governor's status after it. */
  const report = async () => {
    const before = reports.length;
    await mailbox.flush(true);
    expect(reports.length).toBe(before + 1);
    expect(applyReport(core, reports.at(-1)!, clock.now())).toBe(true);
    return {
      observation: reports.at(-1)!.observations!.at(-1)!,
      governor: core.status(clock.now()).governor,
    };
  };
  const call = (step: number, tokens: number) =>
    client.complete({ tenant: 't', runId: 'run-t-1', step, tokens }).then(
      () => 'ok',
      (err: { type?: string }) => err.type ?? 'error',
    );
  return { clock, sim, mailbox, report, call };
}

describe.each(['openai', 'anthropic'] as const)('%s rate-limit headers reach the governor', (dialect) => {
  it('the quota caps the rate, a throttle cuts it and pauses for the Retry-After, a cut quota is followed', async () => {
    const c = await chain(dialect);
    // Healthy calls near the wall: the provider's quota (60,000/min) becomes the governor's ceiling.
    expect(await c.call(1, 20_000)).toBe('ok');
    expect(await c.call(2, 20_000)).toBe('ok');
    const healthy = await c.report();
    expect(healthy.observation).toMatchObject({ calls: 2, throttled: 0, tokens: 40_000, limitTokens: TPM });
    expect(healthy.observation.remainingTokens).toBeLessThanOrEqual(TPM - 40_000);
    expect(healthy.governor.providerTokensPerMinute).toBe(TPM);
    expect(healthy.governor.tokensPerMinute).toBeLessThanOrEqual(0.95 * TPM);

    // The wall: 30,000, more than the bucket holds, refused with a Retry-After of the refill time.
    expect(await c.call(3, 30_000)).toBe('ModelThrottled');
    const wall = await c.report();
    expect(wall.observation).toMatchObject({ calls: 1, throttled: 1, tokens: 0 });
    expect(wall.observation.maxRetryAfterMs).toBeGreaterThan(0);
    expect(wall.governor.decreases).toBe(healthy.governor.decreases + 1);
    expect(wall.governor.throttledRecently).toBe(true);
    expect(wall.governor.tokensPerMinute).toBeLessThan(healthy.governor.tokensPerMinute);
    const pausedFor = Date.parse(wall.governor.pausedUntil!) - c.clock.now();
    expect(pausedFor).toBeGreaterThan(0);
    expect(pausedFor).toBeLessThanOrEqual(wall.observation.maxRetryAfterMs + 1000);

    // The quota is cut to 30% (the storm's cut): the next answer advertises it and the ceiling follows.
    c.clock.advance(60_000);
    c.sim.state.setQuota({ tpm: 0.3 * TPM });
    expect(await c.call(4, 1000)).toBe('ok');
    const cut = await c.report();
    expect(cut.observation.limitTokens).toBe(0.3 * TPM);
    expect(cut.governor.providerTokensPerMinute).toBe(0.3 * TPM);
    expect(cut.governor.tokensPerMinute).toBeLessThanOrEqual(0.95 * 0.3 * TPM);

    // Restored: the ceiling goes back up with the advertised quota.
    c.clock.advance(60_000);
    c.sim.state.setQuota({ tpm: TPM });
    expect(await c.call(5, 1000)).toBe('ok');
    const restored = await c.report();
    expect(restored.governor.providerTokensPerMinute).toBe(TPM);
    await c.mailbox.close();
  });
});

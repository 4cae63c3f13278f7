import { afterEach, describe, expect, it } from 'vitest';
import { firstCallRanks, ranksWithin } from '../support/first-calls';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };
/**
 * Issue 3 asks for a 5,000-unit batch backlog; creating 5,000 run workflows costs a 2-core dev server
 * about 100 s, so the suite uses 250: the bound "at most 2 batch admissions" does not depend on the
 * backlog's size, and 250 outlasts the ~130 admissions the test makes (it checks batch is still
 * queued at the end). PRIORITY_BACKLOG=5000 runs the full size; `npm run bench -- priority` measures it.
 */
const BACKLOG = Number(process.env.PRIORITY_BACKLOG ?? 250);

/**
 * Each run's admission sequence number. One poller waits for the last run (a tenant's runs of one
 * lane are admitted in order), then the rest are read ten at a time: polling queued runs in
 * parallel would query the busy scheduler once per run and slow the admissions being measured.
 */
async function admissionSeqs(s: TestStack, token: string, runIds: string[]): Promise<number[]> {
  const seqOf = async (id: string): Promise<number> => {
    const r = await waitFor(
      () => s.call('GET', `/v1/runs/${id}`, { token }),
      (v) => typeof v.body?.admissionSeq === 'number',
      120_000,
      250,
    );
    return r.body.admissionSeq as number;
  };
  if (runIds.length > 1) await seqOf(runIds[runIds.length - 1]!);
  const out: number[] = [];
  for (let i = 0; i < runIds.length; i += 10)
    out.push(...(await Promise.all(runIds.slice(i, i + 10).map(seqOf))));
  return out;
}

async function submit(
  s: TestStack,
  token: string,
  n: number,
  body: Record<string, unknown>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const replies = await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, () => s.call('POST', '/v1/runs', { token, body })),
    );
    for (const r of replies) {
      expect(r.status).toBe(202);
      ids.push(r.body.runId as string);
    }
  }
  return ids;
}

describe('scheduler policy on a real Temporal server', () => {
  let s: TestStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('weights 1 and 3: admitted token shares over the contention window are 25% / 75% (±5%)', async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '10', ...FAST });
    const light = await s.tenant(`w1-${s.id}`, { weight: 1 });
    const heavy = await s.tenant(`w3-${s.id}`, { weight: 3 });
    // Hold intake so both backlogs are complete before the first admission: the window is pure contention.
    await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } });
    const unit = { agent: 'synthetic', input: { steps: 1, tokensPerStep: 200 } };
    // The shares are exact (fair queuing, no randomness: 75.0% at 150 each in every run so far); 100
    // each keeps a contention window of about 133 admissions, 0.75% a unit.
    const lightRuns = await submit(s, light, 100, unit);
    const heavyRuns = await submit(s, heavy, 100, unit);
    expect((await s.call('POST', '/v1/admin/resume')).status).toBe(200);

    const lightSeqs = await admissionSeqs(s, light, lightRuns);
    const heavySeqs = await admissionSeqs(s, heavy, heavyRuns);
    // Contention lasts until the heavy tenant's backlog runs out.
    const windowEnd = Math.max(...heavySeqs);
    const first = Math.min(...lightSeqs, ...heavySeqs);
    const lightIn = lightSeqs.filter((n) => n <= windowEnd).length;
    const heavyIn = heavySeqs.filter((n) => n <= windowEnd).length;
    const share = heavyIn / (lightIn + heavyIn);
    // Where the work happens: the order the runs' first model calls reached the simulator.
    const ranks = await firstCallRanks(s, [...lightRuns, ...heavyRuns]);
    const heavyAt = heavyRuns.map((id) => ranks.get(id)!);
    const lightAt = lightRuns.map((id) => ranks.get(id)!);
    const simEnd = Math.max(...heavyAt);
    const simLightIn = ranksWithin(lightAt, 0, simEnd);
    const simShare = heavyAt.length / (simLightIn + heavyAt.length);
    console.log(
      `weights: at the simulator heavy ${heavyAt.length}, light ${simLightIn} (heavy share ${(simShare * 100).toFixed(1)}%); ` +
        `admissions ${first}..${windowEnd}, heavy ${heavyIn}, light ${lightIn} (${(share * 100).toFixed(1)}%)`,
    );
    expect(simShare, 'heavy share of first calls at the simulator').toBeGreaterThanOrEqual(0.7);
    expect(simShare, 'heavy share of first calls at the simulator').toBeLessThanOrEqual(0.8);
    // The scheduler's decisions, the second line.
    expect(share).toBeGreaterThanOrEqual(0.7);
    expect(share).toBeLessThanOrEqual(0.8);
  });

  it('priority: an interactive unit is admitted at the next free slot over a batch backlog, and batch keeps its floor', async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '20', ...FAST });
    const t = await s.tenant(`prio-${s.id}`, { maxInFlight: 100, maxQueued: 20_000 });
    const slow = { steps: 1, tokensPerStep: 10, stepMs: 1000 };
    // Hold intake while the backlog is created, so it is complete (not half admitted) when the test starts.
    await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } });
    const batch = await s.call('POST', '/v1/batches', {
      token: t,
      body: { agent: 'synthetic', priority: 'batch', items: Array.from({ length: BACKLOG }, () => slow) },
    });
    expect(batch.status).toBe(202);
    const held = await waitFor(
      () => s!.call('GET', '/v1/admin/scheduler'),
      (v) => v.body.queued.byPriority.batch === BACKLOG,
      360_000,
      1000,
    );
    expect(held.body.queued.byPriority.batch).toBe(BACKLOG);
    await s.call('POST', '/v1/admin/resume');
    await waitFor(
      () => s!.call('GET', '/v1/admin/scheduler'),
      // Every slot but the interactive reserve: batch may not take those.
      (v) => v.body.inFlight === 20 - v.body.config.reservedSlots,
      20_000,
    );

    // Pause admissions (drain, hold), queue the interactive unit, then resume: what this measures is
    // the scheduler's choice when a slot frees, not HTTP latency on a busy machine.
    expect((await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } })).status).toBe(200);
    const interactive = await s.call('POST', '/v1/runs', {
      token: t,
      body: { agent: 'synthetic', priority: 'interactive', input: { steps: 1, tokensPerStep: 10 } },
    });
    expect(interactive.status).toBe(202);
    const queued = await s.call('GET', `/v1/runs/${interactive.body.runId}`, { token: t });
    expect(queued.body.status).toBe('queued');
    // A standard backlog too: batch must still receive its floor while standard is served first.
    const standardRuns = await submit(s, t, 100, { agent: 'synthetic', priority: 'standard', input: slow });
    const before = (await s.call('GET', '/v1/admin/scheduler')).body.counters.admitted as number;
    const calledBefore = s.sim!.state.firstCalls.arrivals().length;
    expect((await s.call('POST', '/v1/admin/resume')).status).toBe(200);
    const [seq] = await admissionSeqs(s, t, [interactive.body.runId]);
    const between = seq! - before - 1;
    const interactiveId = interactive.body.runId as string;
    const ranks = await firstCallRanks(s, [interactiveId, ...standardRuns]);
    const calledBetween = ranks.get(interactiveId)! - calledBefore;
    console.log(
      `priority: ${calledBetween} runs' first calls reached the simulator between the resume and the ` +
        `interactive unit's; ${between} admissions between its submission and its admission`,
    );
    expect(calledBetween, "first calls between the resume and the interactive unit's").toBeLessThanOrEqual(2);
    expect(between).toBeLessThanOrEqual(2);

    const standardSeqs = await admissionSeqs(s, t, standardRuns);
    // While standard had backlog (its first to its last admission), every other admission was batch
    // or the one interactive unit: batch must still have received about its 5% floor.
    const windowStart = Math.min(...standardSeqs);
    const windowEnd = Math.max(...standardSeqs);
    const admittedInWindow = windowEnd - windowStart + 1;
    const interactiveInWindow = seq! >= windowStart && seq! <= windowEnd ? 1 : 0;
    const batchInWindow = admittedInWindow - standardSeqs.length - interactiveInWindow;
    const status = (await s.call('GET', '/v1/admin/scheduler')).body;
    // At the simulator: the runs whose first calls arrived from standard's first to its last.
    const standardAt = standardRuns.map((id) => ranks.get(id)!);
    const simStart = Math.min(...standardAt);
    const simEnd = Math.max(...standardAt);
    const batchRun = `${batch.body.batchId as string}-`;
    const batchAt = s
      .sim!.state.firstCalls.arrivals()
      .flatMap((id, i) => (id.startsWith(batchRun) ? [i] : []));
    const simBatchIn = ranksWithin(batchAt, simStart, simEnd);
    const simWindow = simEnd - simStart + 1;
    console.log(
      `floors: ${simBatchIn} batch of ${simWindow} first calls at the simulator, ` +
        `${batchInWindow} batch of ${admittedInWindow} admissions, while standard was backlogged`,
    );
    // The floor is 5% of admissions; over a window this short, rounding may cost it one.
    expect(simBatchIn, 'batch first calls while standard was backlogged').toBeGreaterThanOrEqual(
      Math.floor(0.05 * simWindow) - 1,
    );
    expect(batchInWindow).toBeGreaterThanOrEqual(Math.floor(0.05 * admittedInWindow) - 1);
    expect(status.queued.byPriority.batch).toBeGreaterThan(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantQuery } from '../../src/contract/scheduler-messages';
import { firstCallRanks } from '../support/first-calls';
import { startTestStack } from '../support/stack';
import type { TestStack } from '../support/stack';

/**
 * Fairness keys inside a tenant on the real dev server, measured at the simulator's first model call
 * per run (where the work starts, not at the decision): one end user's backlog does not hold the
 * tenant's other end users behind it. One slot, so runs start one at a time.
 */
describe('fairness keys (real dev server, first model calls)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '1', FLEET_INTERACTIVE_RESERVE: '0' });
  });
  afterAll(() => s?.close());

  it("a whale's 30 runs queued first: each of 5 other end users gets its k-th run started within its k-th turn", async () => {
    const token = await s.tenant(`app-${s.id}`, { maxQueued: 1000, maxInFlight: 10 });
    const run = async (fairnessKey: string) => {
      const r = await s.call('POST', '/v1/runs', {
        token,
        body: { agent: 'synthetic', input: { steps: 1, stepMs: 300, tokensPerStep: 10 }, fairnessKey },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return r.body.runId as string;
    };
    const whale = await Promise.all(Array.from({ length: 30 }, () => run('whale')));
    const users = Array.from({ length: 5 }, (_, u) => `user-${u}`);
    const mine = new Map<string, string[]>(users.map((u) => [u, []]));
    for (let k = 0; k < 2; k++)
      for (const [u, id] of await Promise.all(users.map(async (u) => [u, await run(u)] as const)))
        mine.get(u)!.push(id);
    const arrived = Date.now();
    // The scheduler explains a queued user's run by its key: its second turn, not behind the backlog.
    const last = mine.get('user-4')![1]!;
    const view = await s.call('GET', `/v1/runs/${last}`, { token });
    expect(view.body.waitingOn, JSON.stringify(view.body)).toMatchObject({ fairnessKey: 'user-4' });
    // Its first run may be under way by now; the whale's backlog still counts one turn a round.
    const k = view.body.waitingOn.keyPosition;
    expect(k.unitsAheadInKey).toBeLessThanOrEqual(1);
    expect(k.keysQueued).toBeGreaterThanOrEqual(2);
    expect(k.unitsAheadInTenant).toBeLessThanOrEqual(11);
    const userIds = [...mine.values()].flat();
    const ranks = await firstCallRanks(s, [...whale, ...userIds], 240_000);
    const firstCalls = s.sim!.state.firstCalls;
    // The whale's runs under way or done by the time every user had arrived.
    const before = whale.filter((id) => firstCalls.get(id)! <= arrived).length;
    // The users arrived behind a backlog: in arrival order they would wait for every whale run left.
    expect(30 - before).toBeGreaterThanOrEqual(12);
    // From then on the 6 keys take turns: ahead of a user's k-th run (k = 1, 2) the whale starts at
    // most k runs of its own, and one more that was admitted as the users arrived.
    for (const [u, ids] of mine)
      ids.forEach((id, k) => {
        const ahead = whale.filter((w) => ranks.get(w)! < ranks.get(id)!).length - before;
        expect(ahead, `${u}'s run ${k + 1}: ${ahead} whale runs started ahead of it`).toBeLessThanOrEqual(
          k + 2,
        );
      });
    console.log(
      `fairness keys: ${before} whale runs under way as the users arrived, then the keys took turns`,
    );
  });

  it("a tenant's keyWeights set through the admin API reach the scheduler workflow, and clear there", async () => {
    const tenant = `weighted-${s.id}`;
    await s.tenant(tenant, { keyWeights: { vip: 3, 'user-7': 0.5 } });
    const scheduler = s.client.workflow.getHandle(s.config.schedulerWorkflowId);
    expect((await scheduler.query(tenantQuery, tenant))?.settings.keyWeights).toEqual({
      vip: 3,
      'user-7': 0.5,
    });
    const cleared = await s.call('PUT', `/v1/admin/tenants/${tenant}`, { body: { keyWeights: null } });
    expect(cleared.status).toBe(200);
    expect((await scheduler.query(tenantQuery, tenant))?.settings).not.toHaveProperty('keyWeights');
  });

  it("a batch's runs carry their items' keys, else the batch's, through the batch workflow", async () => {
    const token = await s.tenant(`batch-${s.id}`, { maxInFlight: 1 });
    const res = await s.call('POST', '/v1/batches', {
      token,
      body: {
        agent: 'synthetic',
        priority: 'standard',
        items: Array.from({ length: 4 }, () => ({ steps: 1, stepMs: 30_000, tokensPerStep: 10 })),
        fairnessKey: 'team-a',
        fairnessKeys: ['whale', 'whale', 'user-1', null],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const ids = [0, 1, 2, 3].map((i) => `${res.body.batchId}-${i}`);
    const view = async (id: string) => (await s.call('GET', `/v1/runs/${id}`, { token })).body;
    // The batch workflow creates its runs a chunk at a time, after the 202.
    await expect
      .poll(async () => (await Promise.all(ids.map(view))).filter((v) => v.runId).length, { timeout: 30_000 })
      .toBe(4);
    // A run is started before its chunk submits it, and an explanation that takes too long is left out
    // (null): read until every queued run is explained, and check that reading.
    let all: Awaited<ReturnType<typeof view>>[] = [];
    await expect
      .poll(
        async () => {
          all = await Promise.all(ids.map(view));
          return all.every((v) => v.status !== 'queued' || v.waitingOn !== null);
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    expect(all.map((v) => v.fairnessKey)).toEqual(['whale', 'whale', 'user-1', 'team-a']);
    // One runs at a time: the others wait, each explained under its own key among the tenant's three.
    const queued = all.filter((v) => v.status === 'queued');
    expect(queued.length).toBeGreaterThanOrEqual(2);
    for (const v of queued)
      expect(v.waitingOn, JSON.stringify(v)).toMatchObject({
        fairnessKey: v.fairnessKey,
        keyPosition: { keysQueued: expect.any(Number) },
      });
    for (const id of ids) await s.call('POST', `/v1/runs/${id}/cancel`, { token });
  });
});

describe('fairness keys of a batch sent in parts (real dev server)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ FLEET_CONCURRENCY: '1', FLEET_INTERACTIVE_RESERVE: '0' });
  });
  afterAll(() => s?.close());

  it("its runs carry each part's item keys, else the batch's, and the tenant status counts them", async () => {
    const tenant = `parts-${s.id}`;
    const token = await s.tenant(tenant, { maxInFlight: 1 });
    const item = { steps: 1, stepMs: 30_000, tokensPerStep: 10 };
    const opened = await s.call('POST', '/v1/batches/open', {
      token,
      body: { agent: 'synthetic', priority: 'standard', fairnessKey: 'team-b' },
    });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const { batchId } = opened.body;
    const parts = [
      { part: 0, items: [item, item], fairnessKeys: ['user-1', null] },
      { part: 1, items: [item, item], fairnessKeys: ['user-2', 'user-2'] },
    ];
    for (const body of parts)
      expect((await s.call('POST', `/v1/batches/${batchId}/items`, { token, body })).status).toBe(200);
    expect((await s.call('POST', `/v1/batches/${batchId}/commit`, { token })).status).toBe(202);
    const ids = [0, 1, 2, 3].map((i) => `${batchId}-${i}`);
    const view = async (id: string) => (await s.call('GET', `/v1/runs/${id}`, { token })).body;
    await expect
      .poll(async () => (await Promise.all(ids.map(view))).filter((v) => v.runId).length, { timeout: 30_000 })
      .toBe(4);
    expect((await Promise.all(ids.map(view))).map((v) => v.fairnessKey)).toEqual([
      'user-1',
      'team-b',
      'user-2',
      'user-2',
    ]);
    // One runs at a time; the scheduler's tenant status counts the keys of the three still queued.
    const scheduler = s.client.workflow.getHandle(s.config.schedulerWorkflowId);
    await expect
      .poll(async () => (await scheduler.query(tenantQuery, tenant))?.queuedByPriority.standard, {
        timeout: 30_000,
      })
      .toBe(3);
    const keys = (await scheduler.query(tenantQuery, tenant))?.keysQueuedByPriority.standard;
    const running = (await Promise.all(ids.map(view))).find((v) => v.status !== 'queued');
    // The running run's key has left the queue unless it was user-2 (whose other run still waits).
    expect(keys).toEqual({ keys: running?.fairnessKey === 'user-2' ? 3 : 2, buckets: 0 });
    for (const id of ids) await s.call('POST', `/v1/runs/${id}/cancel`, { token });
  });
});

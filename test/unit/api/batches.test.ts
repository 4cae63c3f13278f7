import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { bearer, useHarness } from './harness';

describe('batches', () => {
  const h = useHarness({ tenants: ['acme'] });

  const post = (body: unknown, k = h.keys.acme!) =>
    request(h.app)
      .post('/v1/batches')
      .set(bearer(k))
      .send(body as object);

  it('accepts a batch: 202 {batchId,total}, every item parsed, in the batch lane by default', async () => {
    const res = await post({ agent: 'synthetic', items: [{ steps: 1 }, { steps: 3 }] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ batchId: expect.stringMatching(/^batch-acme-[0-9a-f]{16}$/), total: 2 });
    const spec = h.fleet.batches.get(res.body.batchId);
    expect(spec).toMatchObject({ tenant: 'acme', priority: 'batch', estimatedTokensPerItem: 200 });
    expect(spec?.items[1]).toEqual({ steps: 3, tokensPerStep: 100, stepMs: 0, effect: false });

    const view = await request(h.app).get(`/v1/batches/${res.body.batchId}`).set(bearer(h.keys.acme!));
    expect(view.body).toMatchObject({
      batchId: res.body.batchId,
      total: 2,
      queued: 2,
      running: 0,
      failed: 0,
    });
  });

  it('reserves each item at least the mean of its agent estimates, whatever the client declares', async () => {
    const res = await post({
      agent: 'synthetic',
      items: [
        { steps: 10, tokensPerStep: 1000 },
        { steps: 30, tokensPerStep: 1000 },
      ],
      estimatedTokensPerItem: 1,
    });
    expect(res.status).toBe(202);
    expect(h.fleet.batches.get(res.body.batchId)).toMatchObject({ estimatedTokensPerItem: 20_000 });
  });

  it('names each bad item by path and creates nothing', async () => {
    const res = await post({
      agent: 'synthetic',
      items: [{ steps: 1 }, { steps: 1 }, { steps: 1 }, { stepz: 1 }],
    });
    expect(res.status).toBe(400);
    const paths = (res.body.error.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(['items.3.steps', 'items.3.stepz']);
    const tooMany = await post({
      agent: 'synthetic',
      items: Array.from({ length: 10_001 }, () => ({ steps: 1 })),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details[0].path).toBe('items');
    expect((await post({ agent: 'synthetic', items: [] })).status).toBe(400);
    expect((await post({ agent: 'nope', items: [{}] })).status).toBe(404);
    expect(h.fleet.batches.size).toBe(0);
  });

  it("runs each item under its own fairness key, else the batch's, else the tenant's default", async () => {
    const res = await post({
      agent: 'synthetic',
      items: [{ steps: 1 }, { steps: 1 }, { steps: 1 }],
      fairnessKey: 'team-a',
      fairnessKeys: ['user-1', null, 'user-3'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const view = async (i: number) =>
      (await request(h.app).get(`/v1/runs/${res.body.batchId}-${i}`).set(bearer(h.keys.acme!))).body;
    expect((await Promise.all([0, 1, 2].map(view))).map((v) => v.fairnessKey)).toEqual([
      'user-1',
      'team-a',
      'user-3',
    ]);
    // Queued, each explains its place among the tenant's keys under its key.
    const last = await view(2);
    expect(last.waitingOn).toMatchObject({ fairnessKey: 'user-3', keyPosition: { keysQueued: 3 } });
    const plain = await post({ agent: 'synthetic', items: [{ steps: 1 }] });
    expect(
      (await request(h.app).get(`/v1/runs/${plain.body.batchId}-0`).set(bearer(h.keys.acme!))).body,
    ).toMatchObject({ fairnessKey: null });
  });

  it('refuses fairness keys that are malformed or not one per item, and creates nothing', async () => {
    const items = [{ steps: 1 }, { steps: 1 }];
    const paths = async (body: object) => {
      const res = await post({ agent: 'synthetic', items, ...body });
      expect(res.status).toBe(400);
      return (res.body.error.details as { path: string }[]).map((d) => d.path);
    };
    expect(await paths({ fairnessKeys: ['user-1'] })).toEqual(['fairnessKeys']);
    expect(await paths({ fairnessKeys: ['user-1', 'no spaces'] })).toEqual(['fairnessKeys.1']);
    expect(await paths({ fairnessKey: '' })).toEqual(['fairnessKey']);
    expect(h.fleet.batches.size).toBe(0);
  });

  it('caps the details of a batch full of bad items', async () => {
    const res = await post({ agent: 'synthetic', items: Array.from({ length: 500 }, () => ({})) });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toHaveLength(101);
  });

  it('accepts 10,000 items in one body', async () => {
    const big = await h.tenant('big', { maxQueued: 20_000 });
    const items = Array.from({ length: 10_000 }, (_, i) => ({ steps: 1 + (i % 10), tokensPerStep: 1000 }));
    const res = await post({ agent: 'synthetic', items }, big);
    expect(res.status).toBe(202);
    expect(res.body.total).toBe(10_000);
  });

  it('takes batch bodies above the 1 MB run limit, up to its own limit', async () => {
    const big = await h.tenant('big', { maxQueued: 20_000 });
    const res = await post(
      { agent: 'triage', items: Array.from({ length: 600 }, () => ({ incident: 'x'.repeat(1900) })) },
      big,
    );
    expect(res.status).toBe(202); // about 1.2 MB
    const huge = await post({
      agent: 'triage',
      items: Array.from({ length: 9000 }, () => ({ incident: 'x'.repeat(1900) })),
    });
    expect(huge.status).toBe(413);
  });

  it('sheds a batch that does not fit, with Retry-After', async () => {
    const res = await post({ agent: 'synthetic', items: Array.from({ length: 101 }, () => ({ steps: 1 })) });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('queue_full');
    // The core's door: one unit over the limit, drained at a cold fleet's rate in under a second.
    expect(res.headers['retry-after']).toBe('1');
    expect(h.fleet.status().queued.total).toBe(0);
  });

  it('sheds a batch its budget cannot cover until the period ends, and queues nothing', async () => {
    const poor = await h.tenant('poor', { budget: { tokens: 500, period: 'day' } });
    const res = await post({ agent: 'synthetic', items: [{ steps: 2 }, { steps: 2 }, { steps: 2 }] }, poor);
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('budget_exhausted');
    expect(res.headers['retry-after']).toBe(String(12 * 3600)); // 12:00 to the end of the UTC day
    expect(h.fleet.status().counters.submitted).toBe(0);
  });

  it('hides other tenants’ batches and re-drives failed items', async () => {
    const rival = await h.tenant('rival');
    const { body } = await post({ agent: 'synthetic', items: [{ steps: 1 }, { steps: 1 }] });
    expect((await request(h.app).get(`/v1/batches/${body.batchId}`).set(bearer(rival))).status).toBe(404);
    expect((await request(h.app).post(`/v1/batches/${body.batchId}/resume`).set(bearer(rival))).status).toBe(
      404,
    );
    h.fleet.tick();
    h.fleet.complete(`${body.batchId}-1`, { outcome: 'failed' });
    const resumed = await request(h.app).post(`/v1/batches/${body.batchId}/resume`).set(bearer(h.keys.acme!));
    expect(resumed.status).toBe(202);
    expect(resumed.body).toMatchObject({ batchId: body.batchId, resumed: 1 });
  });
});

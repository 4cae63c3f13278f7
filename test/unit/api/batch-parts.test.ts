import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ORPHAN_COMMIT_MS, startOrphanedBatches } from '../../../src/api/routes/batch-parts';
import { bearer, useHarness } from './harness';

/** A batch sent in parts: open, append parts (each once, in order), commit. */
describe('batches sent in parts', () => {
  const h = useHarness({ tenants: ['acme'] });

  const openBatch = async (body: object = { agent: 'synthetic' }, key = h.keys.acme!) =>
    request(h.app).post('/v1/batches/open').set(bearer(key)).send(body);
  const append = (batchId: string, part: number, items: unknown[], key = h.keys.acme!) =>
    request(h.app).post(`/v1/batches/${batchId}/items`).set(bearer(key)).send({ part, items });
  const commit = (batchId: string, key = h.keys.acme!) =>
    request(h.app).post(`/v1/batches/${batchId}/commit`).set(bearer(key));
  const view = (batchId: string, key = h.keys.acme!) =>
    request(h.app).get(`/v1/batches/${batchId}`).set(bearer(key));
  const steps = (n: number, k = 1) => Array.from({ length: n }, (_, i) => ({ steps: k + (i % 3) }));

  it('opens (201, open), appends parts in order, commits (202) and starts every item once, in order', async () => {
    const opened = await openBatch({ agent: 'synthetic', priority: 'standard' });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({ state: 'open', total: 0, parts: 0 });
    const { batchId } = opened.body;
    expect(batchId).toMatch(/^batch-acme-[0-9a-f]{16}$/);
    expect(opened.headers.location).toBe(`/v1/batches/${batchId}`);

    const first = await append(batchId, 0, steps(2));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ part: 0, firstIndex: 0, count: 2, total: 2, replayed: false });
    const second = await append(batchId, 1, [{ steps: 7 }, { steps: 8 }, { steps: 9 }]);
    expect(second.body).toMatchObject({ part: 1, firstIndex: 2, count: 3, total: 5, replayed: false });
    expect((await view(batchId)).body).toMatchObject({ state: 'open', total: 5, queued: 0 });
    expect(h.fleet.batches.size).toBe(0);

    const committed = await commit(batchId);
    expect(committed.status).toBe(202);
    expect(committed.body).toMatchObject({ batchId, total: 5 });
    const spec = h.fleet.batches.get(batchId)!;
    expect(spec).toMatchObject({ tenant: 'acme', priority: 'standard', agent: 'synthetic' });
    expect(spec.items.map((i) => (i as { steps: number }).steps)).toEqual([1, 2, 7, 8, 9]);
    // Each item reserves at least the mean of the agent's estimates (as a one-request batch does).
    expect(spec.estimatedTokensPerItem).toBe(Math.ceil((27 * 100) / 5));
    expect(h.fleet.records.size).toBe(5);
    expect((await view(batchId)).body).toMatchObject({ state: 'committed', total: 5, queued: 5 });

    // A retried commit starts nothing twice; a part after the commit is refused.
    expect((await commit(batchId)).status).toBe(202);
    expect(h.fleet.records.size).toBe(5);
    const late = await append(batchId, 2, steps(1));
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('conflict');
  });

  it('appends a retried part once: same part and items → replayed, other items → 422, a gap → 409', async () => {
    const { batchId } = (await openBatch()).body;
    expect((await append(batchId, 0, steps(3))).body.replayed).toBe(false);
    const again = await append(batchId, 0, steps(3));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ part: 0, firstIndex: 0, count: 3, total: 3, replayed: true });
    const other = await append(batchId, 0, steps(3, 5));
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_conflict');
    const gap = await append(batchId, 2, steps(1));
    expect(gap.status).toBe(409);
    expect(gap.body.error.details).toEqual({ expected: 1 });
    expect((await view(batchId)).body.total).toBe(3);
    expect((await commit(batchId)).status).toBe(202);
    expect(h.fleet.batches.get(batchId)!.items).toHaveLength(3);
  });

  it('lets no other tenant (nor the admin token) see, append to or commit a batch', async () => {
    const rival = await h.tenant('rival');
    const { batchId } = (await openBatch()).body;
    await append(batchId, 0, steps(1));
    expect((await append(batchId, 1, steps(1), rival)).status).toBe(404);
    expect((await commit(batchId, rival)).status).toBe(404);
    expect((await view(batchId, rival)).status).toBe(404);
    const asAdmin = await request(h.app)
      .post(`/v1/batches/${batchId}/items`)
      .set(h.admin())
      .send({ part: 1, items: steps(1) });
    expect(asAdmin.status).toBe(403);
    expect((await view(batchId)).body.total).toBe(1);
    // The admin token may read it.
    expect((await request(h.app).get(`/v1/batches/${batchId}`).set(h.admin())).status).toBe(200);
  });

  it('answers bad input with 4xx: unknown batch, empty commit (409), bad items, resume before commit', async () => {
    const missing = 'batch-acme-0123456789abcdef';
    expect((await append(missing, 0, steps(1))).status).toBe(404);
    expect((await commit(missing)).status).toBe(404);
    expect((await append('not-a-batch', 0, steps(1))).status).toBe(404);
    expect((await openBatch({ agent: 'nope' })).status).toBe(404);
    expect((await openBatch({ agent: 'synthetic', items: [] })).status).toBe(400);
    const { batchId } = (await openBatch()).body;
    const empty = await commit(batchId);
    expect(empty.status).toBe(409);
    expect(empty.body.error.message).toMatch(/no items yet/);
    const bad = await append(batchId, 0, [{ steps: 1 }, { stepz: 1 }]);
    expect(bad.status).toBe(400);
    expect((bad.body.error.details as { path: string }[]).map((d) => d.path).sort()).toEqual([
      'items.1.steps',
      'items.1.stepz',
    ]);
    expect((await append(batchId, 0, [])).status).toBe(400);
    expect((await append(batchId, -1, steps(1))).status).toBe(400);
    const resumed = await request(h.app).post(`/v1/batches/${batchId}/resume`).set(bearer(h.keys.acme!));
    expect(resumed.status).toBe(409);
    expect((await view(batchId)).body.total).toBe(0);
  });

  it("refuses a part that would take the batch past 10,000 items or the tenant's maxQueued", async () => {
    const { batchId } = (await openBatch()).body; // acme: maxQueued 100
    expect((await append(batchId, 0, steps(60))).status).toBe(200);
    const over = await append(batchId, 1, steps(41));
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/at most 100/);
    expect((await view(batchId)).body.total).toBe(60);

    const big = await h.tenant('big', { maxQueued: 50_000 });
    const large = (await openBatch({ agent: 'synthetic' }, big)).body.batchId as string;
    expect((await append(large, 0, steps(6000), big)).status).toBe(200);
    h.clock.now += 10_000; // the per-item rate limit's debt
    const past = await append(large, 1, steps(4001), big);
    expect(past.status).toBe(400);
    expect(past.body.error.message).toMatch(/at most 10000/);
    h.clock.now += 10_000;
    expect((await append(large, 1, steps(4000), big)).body.total).toBe(10_000);
  });

  it('refuses a part over the body limit with 413 naming the limit', async () => {
    const { batchId } = (await openBatch({ agent: 'triage' })).body;
    const items = Array.from({ length: 2100 }, () => ({ incident: 'x'.repeat(1990) }));
    const res = await append(batchId, 0, items);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(res.body.error.message).toMatch(/limit is 4194304 bytes/);
    expect((await view(batchId)).body.total).toBe(0);
  });

  it("checks the whole batch against the tenant's queue at commit: refused, it stays open", async () => {
    const { batchId } = (await openBatch()).body; // maxQueued 100
    for (let i = 0; i < 60; i++) expect((await h.submit(h.keys.acme!)).status).toBe(202);
    await append(batchId, 0, steps(30));
    await append(batchId, 1, steps(20));
    const refused = await commit(batchId);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('queue_full');
    expect(refused.headers['retry-after']).toBeDefined();
    expect(h.fleet.batches.size).toBe(0);
    expect((await view(batchId)).body).toMatchObject({ state: 'open', total: 50 });
    expect((await append(batchId, 2, steps(1))).body.total).toBe(51);
  });

  it('charges the submission rate per item, part by part', async () => {
    // The harness's rate: 1000 items/s, burst 2000: a 2,000-item part drains the bucket.
    const slow = await h.tenant('slow', { maxQueued: 50_000 });
    const { batchId } = (await openBatch({ agent: 'synthetic' }, slow)).body;
    expect((await append(batchId, 0, steps(2000), slow)).status).toBe(200);
    const next = await append(batchId, 1, steps(10), slow);
    expect(next.status).toBe(429);
    expect(next.body.error.code).toBe('rate_limited');
    h.clock.now += 1000;
    expect((await append(batchId, 1, steps(10), slow)).status).toBe(200);
  });

  it('opens at most 16 batches per tenant at once; an abandoned one is forgotten after a day', async () => {
    for (let i = 0; i < 16; i++) expect((await openBatch()).status).toBe(201);
    const refused = await openBatch();
    expect(refused.status).toBe(409);
    h.clock.now += 24 * 3600 * 1000 + 1;
    expect((await openBatch()).status).toBe(201);
  });

  it('starts a batch whose commit request died after freezing it; one the queue refuses opens again', async () => {
    const log = pino({ level: 'silent' });
    const later = () => Date.now() + ORPHAN_COMMIT_MS + 1000;
    const { batchId } = (await openBatch()).body;
    await append(batchId, 0, steps(4));
    await h.batchItems.commit(batchId); // the request died here, before the workflow started
    expect(await startOrphanedBatches({ fleet: h.fleet, batchItems: h.batchItems, log }, Date.now())).toBe(0);
    expect(await startOrphanedBatches({ fleet: h.fleet, batchItems: h.batchItems, log }, later())).toBe(1);
    expect(h.fleet.records.size).toBe(4);
    expect(await h.batchItems.get(batchId)).toMatchObject({ state: 'committed', started: true });
    expect(await startOrphanedBatches({ fleet: h.fleet, batchItems: h.batchItems, log }, later())).toBe(0);

    const full = (await openBatch()).body.batchId as string; // 4 queued + 97 > maxQueued 100
    await append(full, 0, steps(97));
    await h.batchItems.commit(full);
    expect(await startOrphanedBatches({ fleet: h.fleet, batchItems: h.batchItems, log }, later())).toBe(0);
    expect(await h.batchItems.get(full)).toMatchObject({ state: 'open', started: false });
    expect(h.fleet.records.size).toBe(4);
  });
});

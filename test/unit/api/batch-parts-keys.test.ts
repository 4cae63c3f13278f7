import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ORPHAN_COMMIT_MS, startOrphanedBatches } from '../../../src/api/routes/batch-parts';
import { bearer, useHarness } from './harness';

/** Fairness keys on a batch sent in parts: the batch's on open, each item's on its part. */
describe('batches sent in parts: fairness keys', () => {
  const h = useHarness({ tenants: ['acme'] });

  const openBatch = async (body: object = { agent: 'synthetic' }) =>
    request(h.app).post('/v1/batches/open').set(bearer(h.keys.acme!)).send(body);
  const append = (batchId: string, body: object) =>
    request(h.app).post(`/v1/batches/${batchId}/items`).set(bearer(h.keys.acme!)).send(body);
  const commit = (batchId: string) =>
    request(h.app).post(`/v1/batches/${batchId}/commit`).set(bearer(h.keys.acme!));
  const keysOfRuns = (batchId: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const run = await request(h.app).get(`/v1/runs/${batchId}-${i}`).set(bearer(h.keys.acme!));
        return run.body.fairnessKey as string | null;
      }),
    );
  const one = { steps: 1 };

  it("runs each item under its part's key for it, else the batch's, else the tenant's default", async () => {
    const opened = await openBatch({ agent: 'synthetic', fairnessKey: 'team-a' });
    expect(opened.status).toBe(201);
    const { batchId } = opened.body;
    expect(
      (await append(batchId, { part: 0, items: [one, one], fairnessKeys: ['user-1', null] })).status,
    ).toBe(200);
    expect((await append(batchId, { part: 1, items: [one] })).status).toBe(200);
    expect(
      (await append(batchId, { part: 2, items: [one, one], fairnessKeys: [null, 'user-5'] })).status,
    ).toBe(200);
    expect((await commit(batchId)).status).toBe(202);
    expect(await keysOfRuns(batchId, 5)).toEqual(['user-1', 'team-a', 'team-a', 'team-a', 'user-5']);
    const queued = await request(h.app).get(`/v1/runs/${batchId}-4`).set(bearer(h.keys.acme!));
    expect(queued.body.waitingOn).toMatchObject({ fairnessKey: 'user-5' });

    const plain = (await openBatch()).body.batchId as string;
    await append(plain, { part: 0, items: [one], fairnessKeys: [null] });
    await commit(plain);
    expect(await keysOfRuns(plain, 1)).toEqual([null]);
  });

  it('recognises a retried part by its keys too: the same keys replay, other keys conflict', async () => {
    const { batchId } = (await openBatch()).body;
    const body = { part: 0, items: [one, one], fairnessKeys: ['user-1', 'user-2'] };
    expect((await append(batchId, body)).body.replayed).toBe(false);
    expect((await append(batchId, body)).body.replayed).toBe(true);
    const other = await append(batchId, { ...body, fairnessKeys: ['user-1', 'user-3'] });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect((await append(batchId, { part: 0, items: [one, one] })).status).toBe(422);
  });

  it('refuses malformed or mis-sized keys with 400 at their path, storing nothing', async () => {
    const bad = await openBatch({ agent: 'synthetic', fairnessKey: 'no spaces' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).toEqual(['fairnessKey']);
    expect(await h.batchItems.countOpen('acme', 0)).toBe(0);

    const { batchId } = (await openBatch()).body;
    const paths = async (body: object) => {
      const res = await append(batchId, { part: 0, items: [one, one], ...body });
      expect(res.status).toBe(400);
      return (res.body.error.details as { path: string }[]).map((d) => d.path);
    };
    expect(await paths({ fairnessKeys: ['user-1'] })).toEqual(['fairnessKeys']);
    expect(await paths({ fairnessKeys: ['user-1', 'no spaces'] })).toEqual(['fairnessKeys.1']);
    expect(await paths({ fairnessKeys: [] })).toEqual(['fairnessKeys']);
    expect(await h.batchItems.get(batchId)).toMatchObject({ items: 0, parts: 0 });
  });

  it('starts an orphaned committed batch under its keys', async () => {
    const { batchId } = (await openBatch({ agent: 'synthetic', fairnessKey: 'team-b' })).body;
    await append(batchId, { part: 0, items: [one, one], fairnessKeys: ['user-9', null] });
    await h.batchItems.commit(batchId); // the commit request died before starting the workflow
    const deps = { fleet: h.fleet, batchItems: h.batchItems, log: pino({ level: 'silent' }) };
    expect(await startOrphanedBatches(deps, Date.now() + ORPHAN_COMMIT_MS + 1000)).toBe(1);
    expect(await keysOfRuns(batchId, 2)).toEqual(['user-9', 'team-b']);
  });
});

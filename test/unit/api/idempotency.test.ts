import { describe, expect, it, vi } from 'vitest';
import { synthetic, useHarness } from './harness';
import { loadConfig } from '../../../src/config';
import { PENDING_CLAIM_TTL_MS } from '../../../src/stores/idempotency/idempotency';

describe('idempotency', () => {
  const h = useHarness({ tenants: ['acme'] });
  const post = (body: object, headers: Record<string, string> = {}, k = h.keys.acme!) =>
    h.submit(k, body, headers);

  it('returns the same run with 200 for the same key and body, with no second submission', async () => {
    const first = await post({ ...synthetic(3), idempotencyKey: 'order-1' });
    expect(first.status).toBe(202);
    // Random, not derived from the key: a key reused after its retention must name a new run.
    expect(first.body.runId).toMatch(/^run-acme-[0-9a-f]{20}$/);
    // Same meaning, other key order, key in the header instead of the body.
    const again = await post({ input: { steps: 3 }, agent: 'synthetic' }, { 'Idempotency-Key': 'order-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      runId: first.body.runId,
      status: 'queued',
      tenant: 'acme',
      links: first.body.links,
    });
    expect(h.fleet.submitCalls).toHaveLength(1);
    expect(h.fleet.startRunCalls).toHaveLength(1);
  });

  it('answers 422 idempotency_conflict for the same key with another body', async () => {
    await post({ ...synthetic(3), idempotencyKey: 'order-1' });
    const other = await post({ ...synthetic(4), idempotencyKey: 'order-1' });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect(h.fleet.submitCalls).toHaveLength(1);
  });

  it('rejects a header key that differs from the body key', async () => {
    const res = await post({ ...synthetic(), idempotencyKey: 'a' }, { 'Idempotency-Key': 'b' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'idempotencyKey', message: expect.any(String) }]);
    const long = await post(synthetic(), { 'Idempotency-Key': 'x'.repeat(256) });
    expect(long.status).toBe(400);
    expect((await post(synthetic(), { 'Idempotency-Key': 'x'.repeat(255) })).status).toBe(202);
  });

  it('scopes keys per tenant', async () => {
    const otherKey = await h.tenant('other');
    const a = await post({ ...synthetic(), idempotencyKey: 'same' });
    const b = await post({ ...synthetic(), idempotencyKey: 'same' }, {}, otherKey);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.runId).toMatch(/^run-other-/);
  });

  it('lets a refused request be retried with the same key once the door reopens', async () => {
    await h.fleet.drain('refuse');
    expect((await post({ ...synthetic(), idempotencyKey: 'k' })).status).toBe(503);
    await h.fleet.resume();
    expect((await post({ ...synthetic(), idempotencyKey: 'k' })).status).toBe(202);
  });

  it('completes its claim through a store that is away for a moment: the retry is a 200, not a 409', async () => {
    // A database restart under the API (the cluster chaos drill): the run is accepted, the claim's
    // completion fails twice, then goes through. Without the retry the answer was a 5xx for an accepted
    // run, and every retry with the key a 409 until the claim went stale.
    const complete = vi.spyOn(h.store.idempotency, 'complete');
    complete
      .mockRejectedValueOnce(new Error('Connection terminated'))
      .mockRejectedValueOnce(new Error('Connection terminated'));
    const first = await post({ ...synthetic(), idempotencyKey: 'blip' });
    expect(first.status).toBe(202);
    expect(complete).toHaveBeenCalledTimes(3);
    const again = await post({ ...synthetic(), idempotencyKey: 'blip' });
    expect(again.status).toBe(200);
    expect(again.body.runId).toBe(first.body.runId);
    expect(h.fleet.startRunCalls).toHaveLength(1);
  });

  it('releases a refused claim through a store that is away for a moment', async () => {
    const release = vi.spyOn(h.store.idempotency, 'release');
    release.mockRejectedValueOnce(new Error('Connection terminated'));
    await h.fleet.drain('refuse');
    expect((await post({ ...synthetic(), idempotencyKey: 'k2' })).status).toBe(503);
    expect(release).toHaveBeenCalledTimes(2);
    await h.fleet.resume();
    expect((await post({ ...synthetic(), idempotencyKey: 'k2' })).status).toBe(202);
  });

  it('answers 409 with Retry-After while the first request with the key is still in flight', async () => {
    let open!: () => void;
    h.fleet.gate = new Promise<void>((resolve) => (open = resolve));
    // then() sends the request now; it stops inside fleet.submit until the gate opens.
    const first = post({ ...synthetic(), idempotencyKey: 'slow' }).then((r) => r);
    await vi.waitFor(() => expect(h.fleet.submitCalls).toHaveLength(1));
    const second = await post({ ...synthetic(), idempotencyKey: 'slow' });
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBe('1');
    open();
    expect((await first).status).toBe(202);
    expect((await post({ ...synthetic(), idempotencyKey: 'slow' })).status).toBe(200);
    expect(h.fleet.submitCalls).toHaveLength(1);
  });

  it('keeps keys for 24 hours and forgets them after', async () => {
    await post({ ...synthetic(3), idempotencyKey: 'k' });
    h.clock.now += 23 * 3600_000;
    expect((await post({ ...synthetic(4), idempotencyKey: 'k' })).status).toBe(422);
    h.clock.now += 2 * 3600_000;
    expect((await post({ ...synthetic(4), idempotencyKey: 'k' })).status).toBe(202);
    expect(await h.store.idempotency.count()).toBe(1);
  });
});

describe('IDEMPOTENCY_PENDING_TTL_SECONDS', () => {
  it("defaults to the store's PENDING_CLAIM_TTL_MS and refuses less than the API's 30 s wait", () => {
    expect(loadConfig({}).pendingClaimTtlMs).toBe(PENDING_CLAIM_TTL_MS);
    expect(loadConfig({ IDEMPOTENCY_PENDING_TTL_SECONDS: '35' }).pendingClaimTtlMs).toBe(35_000);
    expect(() => loadConfig({ IDEMPOTENCY_PENDING_TTL_SECONDS: '29' })).toThrow(
      /IDEMPOTENCY_PENDING_TTL_SECONDS: 29 is less than SCHEDULER_ANSWER_SECONDS \(30\)/,
    );
  });

  it("follows SCHEDULER_ANSWER_SECONDS, the API's wait for the scheduler (default 30 s)", () => {
    expect(loadConfig({}).schedulerAnswerMs).toBe(30_000);
    const short = loadConfig({ SCHEDULER_ANSWER_SECONDS: '15', IDEMPOTENCY_PENDING_TTL_SECONDS: '15' });
    expect(short).toMatchObject({ schedulerAnswerMs: 15_000, pendingClaimTtlMs: 15_000 });
    expect(() =>
      loadConfig({ SCHEDULER_ANSWER_SECONDS: '15', IDEMPOTENCY_PENDING_TTL_SECONDS: '14' }),
    ).toThrow(/IDEMPOTENCY_PENDING_TTL_SECONDS: 14 is less than SCHEDULER_ANSWER_SECONDS \(15\)/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyReceiver } from '../support/flaky-receiver';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * Issue 32, webhooks out, on the real stack: a tenant's endpoint is down while its runs finish (they
 * finish anyway), then comes up misbehaving: each event's first request answers 500, its second is
 * held past the delivery timeout (the receiver did get it), the third is a duplicate the receiver
 * recognises by its webhook-id. Every request verifies with the published `standardwebhooks`.
 */
const TIMEOUT_MS = 2_000;
const HOLD_MS = 5_000;

interface Attempt {
  n: number;
  status: number | null;
  error: string | null;
}
interface Delivery {
  eventId: string;
  type: string;
  state: string;
  attempts: Attempt[];
}

describe('webhooks out to a flaky receiver (real dev server)', () => {
  let s: TestStack;
  let receiver: FlakyReceiver;
  beforeAll(async () => {
    s = await startTestStack({
      WEBHOOK_TARGETS: 'any',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '800',
      WEBHOOK_MAX_ATTEMPTS: '50',
    });
    receiver = new FlakyReceiver(await FlakyReceiver.freePort(), HOLD_MS);
  });
  afterAll(async () => {
    await receiver?.close();
    await s?.close();
  });

  it('delivers every event signed, retried past 5xx and timeouts, with one id per event', async () => {
    const key = await s.tenant('hooks');
    const created = await s.call('POST', '/v1/webhooks', {
      token: key,
      body: {
        url: receiver.url,
        events: ['run.completed', 'run.failed', 'run.awaiting_approval', 'batch.completed'],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    receiver.secret = created.body.secret as string;
    const hook = created.body.id as string;
    // The secret is shown once.
    const listed = await s.call('GET', '/v1/webhooks', { token: key });
    expect(listed.body.items).toEqual([expect.objectContaining({ id: hook, url: receiver.url })]);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');

    const run = async (agent: string, input: unknown) => {
      const r = await s.call('POST', '/v1/runs', { token: key, body: { agent, input } });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return r.body.runId as string;
    };
    const ok = await run('synthetic', { steps: 1, tokensPerStep: 10 });
    const bad = await run('synthetic', { steps: 1, tokensPerStep: 10, failAtStep: 1 });
    const gated = await run('triage', { incident: 'disk full' });
    const batch = await s.call('POST', '/v1/batches', {
      token: key,
      body: {
        agent: 'synthetic',
        items: [
          { steps: 1, tokensPerStep: 10 },
          { steps: 1, failAtStep: 1 },
        ],
      },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(202);
    const batchId = batch.body.batchId as string;

    // The receiver is down: every run still reaches its end (or its gate).
    const statusOf = async (id: string) =>
      (await s.call('GET', `/v1/runs/${id}`, { token: key })).body.status;
    const ends = await waitFor(
      () => Promise.all([ok, bad, gated].map(statusOf)),
      (v) => v[0] === 'completed' && v[1] === 'failed' && v[2] === 'awaiting_approval',
      60_000,
    );
    expect(ends).toEqual(['completed', 'failed', 'awaiting_approval']);
    const b = await waitFor(
      () => s.call('GET', `/v1/batches/${batchId}`, { token: key }).then((r) => r.body),
      (v) => v.completed + v.failed === 2,
      60_000,
    );
    expect(b).toMatchObject({ completed: 1, failed: 1 });

    // Six events, each already tried (and refused: nothing listens) more than once.
    const deliveries = () =>
      s
        .call('GET', `/v1/webhooks/${hook}/deliveries`, { token: key })
        .then((r) => r.body.items as Delivery[]);
    const down = await waitFor(
      deliveries,
      (ds) => ds.length === 6 && ds.every((d) => d.attempts.length >= 2),
      30_000,
    );
    expect(down.map((d) => d.type).sort()).toEqual([
      'batch.completed',
      'run.awaiting_approval',
      'run.completed',
      'run.completed',
      'run.failed',
      'run.failed',
    ]);
    for (const d of down) {
      expect(d.state).toBe('pending');
      for (const a of d.attempts)
        expect(a).toMatchObject({ status: null, error: expect.stringMatching(/ECONNREFUSED/) });
    }

    await receiver.start();
    const done = await waitFor(deliveries, (ds) => ds.every((d) => d.state === 'delivered'), 30_000);

    // Each event was received at least three times, always under the same id, and processed once.
    const ids = new Set(done.map((d) => d.eventId));
    expect(ids.size).toBe(6);
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(ids);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    for (const id of ids) {
      const got = receiver.received.filter((r) => r.id === id);
      expect(got.map((r) => r.reply).slice(0, 3)).toEqual(['fail', 'hold', 'ok']);
      expect(got[2]!.duplicate).toBe(true);
      expect(new Set(got.map((r) => r.body)).size).toBe(1);
    }
    expect(receiver.processed.size).toBe(6);

    // The attempts as the API shows them: refused while down, then 500, then the timeout, then 200.
    for (const d of done) {
      const tail = d.attempts.slice(-3);
      expect(tail.map((a) => a.status)).toEqual([500, null, 200]);
      expect(tail[1]!.error).toMatch(/timed out/);
      expect(d.attempts.map((a) => a.n)).toEqual(d.attempts.map((_, i) => i + 1));
    }

    // What the events say.
    const bodies = [...receiver.processed.values()] as { type: string; data: Record<string, unknown> }[];
    const of = (type: string) => bodies.filter((x) => x.type === type).map((x) => x.data);
    expect(of('run.completed').map((d) => d.runId)).toContain(ok);
    expect(of('run.failed').map((d) => d.runId)).toContain(bad);
    expect(of('run.awaiting_approval')).toEqual([expect.objectContaining({ runId: gated, tenant: 'hooks' })]);
    expect(of('batch.completed')).toEqual([
      { batchId, tenant: 'hooks', total: 2, completed: 1, failed: 1, cancelled: 0 },
    ]);
    // The real signature verifies under the endpoint's secret and not under another (the check above can fail).
    const { Webhook } = await import('standardwebhooks');
    const r0 = receiver.received[0]!;
    const sent = {
      'webhook-id': r0.id,
      'webhook-timestamp': r0.timestamp,
      'webhook-signature': r0.signature,
    };
    expect(r0.signature).toMatch(/^v1,/);
    expect(() => new Webhook(receiver.secret).verify(r0.body, sent)).not.toThrow();
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(r0.body, sent),
    ).toThrow();

    await s.call('POST', `/v1/runs/${gated}/cancel`, { token: key });
  });

  it("a deleted tenant's endpoints go with it: its id created again inherits none (44, item 2)", async () => {
    const first = await s.tenant('reborn');
    const hook = await s.call('POST', '/v1/webhooks', {
      token: first,
      body: { url: 'http://old-owner.example/hooks', events: ['run.completed'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const id = hook.body.id as string;
    expect((await s.call('GET', `/v1/webhooks/${id}/deliveries`, { token: first })).status).toBe(200);

    expect((await s.call('POST', '/v1/admin/tenants/reborn/disable')).status).toBe(200);
    const deleted = await s.call('DELETE', '/v1/admin/tenants/reborn');
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
    const second = await s.tenant('reborn');

    const listed = await s.call('GET', '/v1/webhooks', { token: second });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);
    const log = await s.call('GET', `/v1/webhooks/${id}/deliveries`, { token: second });
    expect(log.status).toBe(404);
    expect(log.body).toMatchObject({ error: { code: expect.any(String) } });
  });
});

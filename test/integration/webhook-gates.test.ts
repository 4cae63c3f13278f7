import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyReceiver } from '../support/flaky-receiver';
import { REGATE_MODULE, startRegateWorker } from '../support/regate-worker';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

interface Delivery {
  eventId: string;
  type: string;
}

/**
 * Each gate of a run is announced: a run that gates again after a rejection makes a second
 * `run.awaiting_approval` event with an id of its own (real dev server, the API's own scan).
 */
describe('webhooks of a run that gates again (real dev server)', () => {
  let s: TestStack;
  let worker: { close(): Promise<void> } | undefined;
  let receiver: FlakyReceiver;
  beforeAll(async () => {
    s = await startTestStack({
      AGENTS: REGATE_MODULE,
      WEBHOOK_TARGETS: 'any',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '800',
    });
    worker = await startRegateWorker(s);
    receiver = new FlakyReceiver(await FlakyReceiver.freePort(), 0);
  }, 180_000);
  afterAll(async () => {
    await receiver?.close();
    await worker?.close();
    await s?.close();
  });

  it('announces the second gate under its own event id, with its gate id', async () => {
    const key = await s.tenant('hooks');
    const created = await s.call('POST', '/v1/webhooks', {
      token: key,
      body: { url: receiver.url, events: ['run.awaiting_approval'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    receiver.secret = created.body.secret as string;
    await receiver.start();
    const hook = created.body.id as string;
    const deliveries = () =>
      s
        .call('GET', `/v1/webhooks/${hook}/deliveries`, { token: key })
        .then((r) => r.body.items as Delivery[]);

    const r = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'regate', input: { gates: 3 } },
    });
    expect(r.status).toBe(202);
    const runId = r.body.runId as string;
    const first = await waitFor(deliveries, (ds) => ds.length === 1, 60_000);
    expect(first[0]!.type).toBe('run.awaiting_approval');

    expect(
      (await s.call('POST', `/v1/runs/${runId}/reject`, { token: key, body: { gateId: 1 } })).status,
    ).toBe(200);
    await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
      (v) => v.body?.status === 'awaiting_approval' && v.body?.gate?.proposal?.attempt === 2,
      60_000,
    );
    const both = await waitFor(deliveries, (ds) => ds.length === 2, 30_000);
    expect(new Set(both.map((d) => d.eventId)).size).toBe(2);
    const bodies = await waitFor(
      async () =>
        [...receiver.processed.values()] as { type: string; data: { runId: string; gateId?: number } }[],
      (bs) => bs.length === 2,
      30_000,
    );
    expect(bodies.map((b) => [b.type, b.data.runId, b.data.gateId]).sort()).toEqual([
      ['run.awaiting_approval', runId, 1],
      ['run.awaiting_approval', runId, 2],
    ]);
  }, 300_000);
});

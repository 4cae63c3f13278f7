import { once } from 'node:events';
import { connect } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callApi, startDrillStack, until, type Reply } from '../../bench/lib/drill-stack';
import { openBatchItems } from '../../src/stores/open';
import { childWorkersUseSuiteBundle } from '../support/suite-bundle';

childWorkersUseSuiteBundle();

/**
 * Issue 11: a batch sent in parts loses nothing and runs nothing twice when the processes serving it
 * die between its steps. Separate API processes (`src/entry/api.ts`) and a worker process share one
 * data directory, as in a deploy; the drill stack's own API stays up to read the results.
 *
 * - An API SIGKILLed while a part's body is still arriving: nothing of that part is stored, and the
 *   client sends it again to another API.
 * - An API SIGKILLed right after it answered 200 for a part: the client, not trusting the answer it
 *   may never have seen, sends it again; it is stored once (`replayed`).
 * - A commit that died after freezing the batch and before starting its workflow (done here through
 *   the store itself, the exact point a crash would leave): the client's retried commit starts it.
 * - The worker SIGKILLed right after the commit's 202, while the batch's chunks are being started:
 *   another worker finishes it.
 * Every item's run completes with its own item (`steps` differs by item), and the effect sink, which
 * counts by itself, saw one effect per item.
 */
const ITEMS = 40;
const PART = 10;
const item = (i: number) => ({ steps: 1 + (i % 3), tokensPerStep: 10, stepMs: 100, effect: true });

/** A JSON request against one API process as the tenant `token`; status 0 once the process is gone. */
const callAt = (url: string, method: string, route: string, token: string, body?: unknown): Promise<Reply> =>
  callApi(url, method, route, { token, timeoutMs: 30_000, ...(body !== undefined ? { body } : {}) });

/**
 * Sends a part's request over a plain socket, its headers and only the first half of its body;
 * resolves once they are written to the kernel, with a promise of how the connection ended: `answered N`,
 * or `closed unanswered` when the server died first.
 */
async function halfSent(
  url: string,
  route: string,
  token: string,
  body: unknown,
): Promise<{ ended: Promise<string> }> {
  const { hostname, port } = new URL(url);
  const bytes = Buffer.from(JSON.stringify(body));
  const socket = connect({ host: hostname, port: Number(port) });
  const ended = new Promise<string>((done) => {
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('error', () => undefined); // a reset: judged by what was answered before it
    socket.on('close', () => done(answer ? `answered ${answer.split(' ')[1]}` : 'closed unanswered'));
  });
  await once(socket, 'connect');
  const head =
    `POST ${route} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`;
  await new Promise<void>((written) =>
    socket.write(Buffer.concat([Buffer.from(head), bytes.subarray(0, bytes.length >> 1)]), () => written()),
  );
  return { ended }; // wrapped: an async function returning a promise would wait for it
}

describe('a batch sent in parts across crashes (separate API and worker processes)', () => {
  it('APIs SIGKILLed mid-part and after a 200, a commit cut before its start, the worker SIGKILLed after the commit: every item runs once', async () => {
    const s = await startDrillStack({ concurrency: 20, sink: true, inMemory: true });
    try {
      await s.startWorker('w1');
      const key = await s.tenant('crashparts', { maxQueued: 1000, maxInFlight: 100 });
      const items = Array.from({ length: ITEMS }, (_, i) => item(i));
      const part = (p: number) => ({ part: p, items: items.slice(p * PART, (p + 1) * PART) });
      const route = (batchId: string) => `/v1/batches/${batchId}/items`;

      const a = await s.startApi('a');
      const opened = await callAt(a.url, 'POST', '/v1/batches/open', key, { agent: 'synthetic' });
      expect(opened.status).toBe(201);
      const batchId = opened.body.batchId as string;
      expect((await callAt(a.url, 'POST', route(batchId), key, part(0))).body).toMatchObject({ total: 10 });

      // API a dies while part 1's body is still arriving.
      const { ended } = await halfSent(a.url, route(batchId), key, part(1));
      // A barrier: API a answers a request sent after the half part, so it has taken that connection
      // and what arrived on it.
      expect((await callAt(a.url, 'GET', '/healthz', key)).status).toBe(200);
      await a.child.kill();
      expect(await ended).toBe('closed unanswered');

      // The client sends part 1 again, to API b: it was never stored, so it is appended now.
      const b = await s.startApi('b');
      expect((await callAt(b.url, 'POST', route(batchId), key, part(1))).body).toMatchObject({
        firstIndex: 10,
        total: 20,
        replayed: false,
      });
      // API b dies right after answering part 2; the client sends it again to API c: stored once.
      expect((await callAt(b.url, 'POST', route(batchId), key, part(2))).body).toMatchObject({ total: 30 });
      await b.child.kill();
      const c = await s.startApi('c');
      expect((await callAt(c.url, 'POST', route(batchId), key, part(2))).body).toMatchObject({
        firstIndex: 20,
        total: 30,
        replayed: true,
      });
      expect((await callAt(c.url, 'POST', route(batchId), key, part(3))).body).toMatchObject({ total: 40 });

      // The commit that dies after freezing the batch, before starting its workflow.
      const store = await openBatchItems(path.join(s.dir, 'batch-items.db'));
      try {
        expect(await store.commit(batchId)).toMatchObject({ state: 'committed', started: false, items: 40 });
        // No part can follow a frozen batch, whichever API is asked.
        const late = await callAt(c.url, 'POST', route(batchId), key, { part: 4, items: [item(0)] });
        expect(late).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
        // The client retries its commit: the batch starts now. The worker dies right after the 202.
        const committed = await callAt(c.url, 'POST', `/v1/batches/${batchId}/commit`, key);
        expect(committed).toMatchObject({ status: 202, body: { batchId, total: ITEMS } });
        await s.worker!.kill();
        expect(await store.get(batchId)).toMatchObject({ started: true });
      } finally {
        await store.close();
      }
      // A commit retried once more (its 202 was lost) answers the same batch and starts nothing new.
      const again = await s.call('POST', `/v1/batches/${batchId}/commit`, { token: key });
      expect(again).toMatchObject({ status: 202, body: { batchId, total: ITEMS } });
      await c.child.kill();

      await s.startWorker('w2');
      const view = await until(
        'every item of the batch finished',
        () => s.call('GET', `/v1/batches/${batchId}`, { token: key }),
        (r) => r.status === 200 && r.body.completed + r.body.failed + r.body.cancelled >= ITEMS,
        600_000,
        1000,
      );
      expect(view.body).toMatchObject({ total: ITEMS, completed: ITEMS, failed: 0, cancelled: 0 });
      for (let i = 0; i < ITEMS; i++) {
        const run = await s.call('GET', `/v1/runs/${batchId}-${i}`, { token: key });
        expect(run.body, `item ${i}`).toMatchObject({ status: 'completed', result: { steps: 1 + (i % 3) } });
      }
      expect(await s.sink()).toMatchObject({ deliveries: ITEMS, distinctKeys: ITEMS, duplicatedKeys: 0 });
    } finally {
      await s.stop();
    }
  });
});

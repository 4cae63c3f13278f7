import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../../src/api/webhooks/send';

/** A local receiver: `/hang` never answers, `/moved` redirects, anything else echoes the body with 201. */
let server: Server;
let port: number;
let hits = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    hits += 1;
    if (req.url === '/hang') return;
    if (req.url === '/moved') return void res.writeHead(302, { location: '/' }).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () =>
      res.writeHead(201, { 'retry-after': '7' }).end(`${req.headers['webhook-id']}:${body}`.repeat(200)),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('postWebhook', () => {
  it('posts the body and keeps the first 1,024 characters of the answer', async () => {
    const r = await postWebhook(`http://127.0.0.1:${port}/in`, { 'webhook-id': 'msg_1' }, '{"a":1}', {
      timeoutMs: 2_000,
      targets: 'any',
    });
    expect(r).toMatchObject({ status: 201, error: null, retryAfter: '7' });
    expect(r.answer).toHaveLength(1024);
    expect(r.answer.startsWith('msg_1:{"a":1}')).toBe(true);
  });

  it('gives up at the timeout, and does not follow a redirect', async () => {
    const slow = await postWebhook(`http://127.0.0.1:${port}/hang`, {}, '{}', {
      timeoutMs: 200,
      targets: 'any',
    });
    expect(slow).toMatchObject({ status: null, error: 'timed out after 200 ms' });
    const before = hits;
    const moved = await postWebhook(`http://127.0.0.1:${port}/moved`, {}, '{}', {
      timeoutMs: 2_000,
      targets: 'any',
    });
    expect(moved.status).toBe(302);
    expect(hits).toBe(before + 1);
  });

  it('under `public`, refuses a name that resolves to loopback, before anything is sent', async () => {
    const before = hits;
    const r = await postWebhook(`http://localhost:${port}/in`, {}, '{}', {
      timeoutMs: 2_000,
      targets: 'public',
    });
    expect(r.status).toBeNull();
    expect(r.error).toMatch(/forbidden address/);
    // The tenant learns that the name is refused, not what it resolves to inside.
    expect(r.error).not.toMatch(/127\.0\.0\.1|::1|\d+\.\d+\.\d+\.\d+/);
    expect(hits).toBe(before);
    expect(
      (await postWebhook(`http://localhost:${port}/in`, {}, '{}', { timeoutMs: 2_000, targets: 'any' }))
        .status,
    ).toBe(201);
  });

  it('under `public`, refuses a forbidden IP literal without connecting, in any spelling', async () => {
    const before = hits;
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::1]', '[64:ff9b::7f00:1]']) {
      const r = await postWebhook(`http://${host}:${port}/in`, {}, '{}', {
        timeoutMs: 2_000,
        targets: 'public',
      });
      expect(r.status, host).toBeNull();
      expect(r.error, host).toMatch(/forbidden address/);
    }
    expect(hits).toBe(before);
    const any = await postWebhook(`http://[::ffff:127.0.0.1]:${port}/in`, {}, '{}', {
      timeoutMs: 2_000,
      targets: 'any',
    });
    expect(any.status).toBe(201);
  });
});

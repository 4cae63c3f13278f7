import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, makeHarness, type Harness } from './harness';

/** Issue 44, item 6: the depth guard reads bytes as UTF-8, so a body in another charset is refused. */

/** Sends `body` to `path` on the real server; resolves with the status and the parsed JSON answer. */
function send(
  method: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method, headers: { ...headers, 'content-length': body.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * `head` then an object holding a string and `depth` nested arrays, in UTF-16LE. The string holds
 * U+4E22, whose low byte is a quote: read as bytes, the string seems to close early and the arrays to
 * sit inside another string, so a byte scan counts none of them.
 */
const deepUtf16 = (depth: number, head: string) =>
  Buffer.from(`${head}{"s":"\u4e22","x":${'['.repeat(depth)}1${']'.repeat(depth)}}}`, 'utf16le');

describe('issue 44: JSON bodies are UTF-8 only (item 6)', () => {
  let h: Harness;
  let key: string;
  let server: Server;
  let port: number;
  beforeEach(async () => {
    h = makeHarness();
    key = await h.tenant('acme');
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await h.close();
  });

  const cases: [string, string, string, string][] = [
    ['PUT', '/v1/triggers/deep', 'utf-16le', '{"eventType":"t","agent":"synthetic","input":'],
    ['POST', '/v1/runs', 'utf-16le', '{"agent":"synthetic","input":'],
    ['POST', '/v1/runs', 'UTF-16', '{"agent":"synthetic","input":'],
    ['POST', '/v1/runs', '"utf-16le"', '{"agent":"synthetic","input":'],
  ];
  for (const [method, path, charset, head] of cases)
    it(`${method} ${path}: 200,000 deep in charset=${charset} is 415 in the JSON error shape, never 5xx`, async () => {
      const res = await send(
        method,
        port,
        path,
        { ...bearer(key), 'content-type': `application/json; charset=${charset}` },
        deepUtf16(200_000, head),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(415);
      expect(res.body.error?.code).toBe('unsupported_media_type');
      expect(res.body.error?.message).toMatch(/UTF-8/);
    });

  it('POST /v1/events in UTF-16 is 415 as well', async () => {
    const res = await send(
      'POST',
      port,
      '/v1/events',
      { ...bearer(key), 'content-type': 'application/json; charset=utf-16le' },
      deepUtf16(200_000, '{"specversion":"1.0","id":"e1","type":"t","source":"s","data":'),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(415);
    expect(res.body.error?.code).toBe('unsupported_media_type');
  });

  it('charset=utf-8 (any case) and no charset are taken', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
    ]) {
      const res = await send(
        'POST',
        port,
        '/v1/runs',
        { ...bearer(key), 'content-type': type },
        Buffer.from('{"agent":"synthetic","input":{"steps":1}}'),
      );
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    }
  });
});

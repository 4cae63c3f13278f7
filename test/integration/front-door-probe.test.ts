import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/api/events/signature';
import { startTestStack, waitFor, type TestStack } from '../support/stack';

/**
 * Issue 30's probes replayed against a real stack (Temporal dev server, worker, simulator, API on its
 * default interface): each finding fixed gets a 4xx or the limited answer. Every probe has a tenant of
 * its own, so one probe's spending does not limit another's.
 */

const counts = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});

/** The request limit of this stack (TENANT_REQUEST_RATE_PER_SECOND), and its bucket's burst (twice it). */
const REQUEST_RATE = 5;
const REQUEST_BURST = 2 * REQUEST_RATE;

/**
 * Sends `n` requests at once and counts what was not refused with 429. The token bucket lets through
 * at most its burst plus what it refilled while the burst lasted (one more for a refill that lands
 * between two reads of the clock): the bound follows the elapsed time, so a slow machine, which
 * spreads the burst out, gets the bound its own timing allows.
 */
async function burst(n: number, send: () => Promise<{ status: number }>) {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: n }, send));
  const seconds = (performance.now() - started) / 1000;
  const seen = counts(answers.map((r) => r.status));
  return {
    seen,
    passed: n - (seen[429] ?? 0),
    allowed: Math.floor(REQUEST_BURST + REQUEST_RATE * seconds) + 1,
  };
}

describe('issue 30: the front door, probed (real stack)', () => {
  let s: TestStack;
  let port: number;

  beforeAll(async () => {
    s = await startTestStack({
      TENANT_RATE_PER_SECOND: '3',
      TENANT_REQUEST_RATE_PER_SECOND: String(REQUEST_RATE),
      TRIGGERS_MAX_PER_TENANT: '5',
      WEBHOOK_SECRETS_MAX_PER_TENANT: '2',
      TRIGGER_INPUT_MAX_BYTES: '2048',
    });
    port = Number(new URL(s.apiUrl!).port);
  });
  afterAll(async () => {
    await s?.close();
  });

  const event = (id: string, type = 'probe.happened', source = 'probe') => ({
    specversion: '1.0',
    id,
    type,
    source,
    data: {},
  });
  const signed = (tenant: string, secret: string, body: object) => {
    const raw = JSON.stringify(body);
    return s.call('POST', `/v1/events?tenant=${tenant}`, {
      token: '',
      headers: {
        'content-type': 'application/json',
        'Fairway-Signature': signPayload(secret, raw, Math.floor(Date.now() / 1000)),
      },
      body: raw,
    });
  };
  const secretOf = async (key: string, source: string) =>
    (await s.call('POST', '/v1/webhook-secrets', { token: key, body: { source } })).body.secret as string;

  it('finding 2: 40 parallel resends of a known Idempotency-Key are limited', async () => {
    const key = await s.tenant('resend');
    const body = { agent: 'synthetic', input: { steps: 1 } };
    const first = await s.call('POST', '/v1/runs', { token: key, body, headers: { 'Idempotency-Key': 'k' } });
    expect(first.status).toBe(202);
    const again = await burst(40, () =>
      s.call('POST', '/v1/runs', { token: key, body, headers: { 'Idempotency-Key': 'k' } }),
    );
    expect(again.passed).toBeLessThanOrEqual(again.allowed);
    expect(again.seen[429]).toBeGreaterThan(0);
    expect((again.seen[200] ?? 0) + (again.seen[429] ?? 0)).toBe(40);
  });

  it('finding 2: resends of a known event id and of a captured signed delivery are limited', async () => {
    const key = await s.tenant('evresend');
    const secret = await secretOf(key, 'probe');
    expect((await s.call('POST', '/v1/events', { token: key, body: event('e1') })).status).toBe(202);
    const keyed = await burst(20, () => s.call('POST', '/v1/events', { token: key, body: event('e1') }));
    expect(keyed.passed).toBeLessThanOrEqual(keyed.allowed);
    expect(keyed.seen[429]).toBeGreaterThan(0);
    const captured = JSON.stringify(event('e2'));
    const sig = signPayload(secret, captured, Math.floor(Date.now() / 1000));
    const replays = await burst(20, () =>
      s.call('POST', '/v1/events?tenant=evresend', {
        token: '',
        headers: { 'content-type': 'application/json', 'Fairway-Signature': sig },
        body: captured,
      }),
    );
    expect(replays.passed).toBeLessThanOrEqual(replays.allowed);
    expect(replays.seen[429]).toBeGreaterThan(0);
  });

  it('finding 3: fan-out is charged per run; triggers, secrets and input size are capped', async () => {
    const key = await s.tenant('fanout');
    const trigger = { eventType: 'probe.happened', agent: 'synthetic', input: { steps: 1 } };
    const puts = [];
    for (let i = 0; i < 6; i++) {
      puts.push((await s.call('PUT', `/v1/triggers/t${i}`, { token: key, body: trigger })).status);
      await new Promise((r) => setTimeout(r, 250)); // under the request rate
    }
    expect(puts).toEqual([201, 201, 201, 201, 201, 409]);
    const big = await s.call('PUT', '/v1/triggers/big', {
      token: key,
      body: { ...trigger, input: { steps: 1, pad: 'x'.repeat(4000) } },
    });
    expect(big.status).toBe(413);
    await new Promise((r) => setTimeout(r, 2500)); // the submission bucket full again
    // At once, so the bucket barely refills between them.
    const answers = await Promise.all(
      [0, 1, 2].map((i) => s.call('POST', '/v1/events', { token: key, body: event(`f${i}`) })),
    );
    // Burst 6 at 3 a second: five runs, five more in debt, then 429.
    expect(counts(answers.map((r) => r.status))).toEqual({ 202: 2, 429: 1 });
    const me = await s.call('GET', '/v1/tenants/me', { token: key });
    expect(me.body.queued.total + me.body.inFlight).toBeLessThanOrEqual(10);

    const secrets = [];
    for (const source of ['a', 'b', 'c'])
      secrets.push((await s.call('POST', '/v1/webhook-secrets', { token: key, body: { source } })).status);
    expect(secrets).toEqual([201, 201, 409]);
  });

  it("finding 4: github's secret neither fires stripe's trigger nor blocks stripe's next event", async () => {
    const key = await s.tenant('billing');
    const stripe = await secretOf(key, 'stripe');
    const github = await secretOf(key, 'github');
    const dunning = {
      eventType: 'stripe.payment_failed',
      sources: ['stripe'],
      agent: 'synthetic',
      input: { steps: 1 },
    };
    expect((await s.call('PUT', '/v1/triggers/dunning', { token: key, body: dunning })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500));
    const impersonated = await signed('billing', github, event('evt_9', 'stripe.payment_failed', 'stripe'));
    expect(impersonated.status).toBe(401);
    const squatted = await signed('billing', github, event('evt_9', 'stripe.payment_failed', 'github'));
    expect(squatted.status).toBe(202);
    expect(squatted.body.runs).toEqual([]);
    const genuine = await signed('billing', stripe, event('evt_9', 'stripe.payment_failed', 'stripe'));
    expect(genuine.status).toBe(202);
    expect(genuine.body.runs).toHaveLength(1);
  });

  it('finding 5: the API listens on loopback only by default', async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (!external) return;
    const reached = await fetch(`http://${external}:${port}/healthz`, {
      signal: AbortSignal.timeout(3000),
    }).then(
      () => true,
      () => false,
    );
    expect(reached).toBe(false);
  });

  it('findings 6 and 7: deep JSON is 400, a prototype name as a console asset is 404', async () => {
    const key = await s.tenant('deep');
    const deep = `${'['.repeat(6000)}1${']'.repeat(6000)}`;
    const r = await s.call('POST', '/v1/events', {
      token: key,
      body: `{"specversion":"1.0","id":"d","type":"t","source":"s","data":${deep}}`,
    });
    expect(r.status).toBe(400);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      expect((await s.call('GET', `/console/assets/${name}`, { token: '' })).status, name).toBe(404);
  });

  it('finding 9: an unauthenticated event is refused before its body is sent', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', () => resolve(text));
      setTimeout(() => {
        socket.destroy();
        resolve(text);
      }, 3000);
      socket.write(
        'POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n',
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
  });
});

/**
 * Finding 8 against a real stack whose model provider is hostile: it answers every call 400 with a
 * 5 MiB message that echoes the worker's API key. Finding 10 (two API replicas on one store) is
 * probed in api-replicas.test.ts.
 */
describe('issue 30: a hostile provider, probed (real stack)', () => {
  const PROVIDER_KEY = 'sk-probe-0123456789abcdefghijklmnop';
  let provider: Server;
  let s: TestStack;

  beforeAll(async () => {
    provider = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const message = `bad request from ${req.headers.authorization ?? ''}: ${'x'.repeat(5 * 1024 * 1024)}`;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message } }));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    s = await startTestStack({ MODEL_BASE_URL: url, MODEL_API_KEY: PROVIDER_KEY });
  }, 240_000);
  afterAll(async () => {
    await s?.close();
    await new Promise<void>((resolve) => provider?.close(() => resolve()));
  });

  it('finding 8: a 5 MiB provider error reaches the run cut and without the key', async () => {
    const key = await s.tenant('hostile');
    const started = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'synthetic', input: { steps: 1 } },
    });
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => (await s.call('GET', `/v1/runs/${started.body.runId}`, { token: key })).body,
      (r) => r.status === 'failed',
      120_000,
    );
    const message = JSON.stringify(run.error);
    expect(message.length).toBeLessThan(2000);
    expect(message).toContain('bad request from Bearer [redacted]');
    expect(message).not.toContain(PROVIDER_KEY);
  });
});

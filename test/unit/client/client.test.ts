import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../src/agent';
import { createClient, FairwayError, type RunDetails } from '../../../src/client';
import { retryAfterSeconds } from '../../../src/client/transport';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/** A fetch that answers from a script, one answer per call, and records what it was sent. */
function fakeFetch(answers: Answer[]) {
  const seen: Seen[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    seen.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)),
      body: init?.body as string | undefined,
    });
    const next = answers.shift();
    if (!next) throw new Error('the script ran out of answers');
    if (next instanceof Error) throw next;
    const text =
      next.body === undefined ? '' : typeof next.body === 'string' ? next.body : JSON.stringify(next.body);
    return new Response(text === '' ? null : text, { status: next.status, headers: next.headers ?? {} });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const client = (answers: Answer[], extra: { maxRetries?: number; maxRetryAfterSeconds?: number } = {}) => {
  const f = fakeFetch(answers);
  return {
    ...f,
    c: createClient({ baseUrl: 'http://fairway.test/', apiKey: 'k-1', fetch: f.fetch, ...extra }),
  };
};

const run = (over: Partial<RunDetails> = {}): RunDetails => ({
  runId: 'run-t-0123456789abcdef0123',
  tenant: 't',
  agent: 'echo',
  priority: 'standard',
  status: 'queued',
  createdAt: '2026-01-01T00:00:00.000Z',
  admittedAt: null,
  admissionSeq: null,
  finishedAt: null,
  usage: { tokens: 0 },
  waitingOn: null,
  result: null,
  error: null,
  batchId: null,
  toolCalls: [],
  ...over,
});

const echo = defineAgent({
  name: 'echo',
  input: z.object({ text: z.string(), times: z.int().default(1) }),
  estimate: 10,
  async run(_ctx, input) {
    return { echoed: input.text.repeat(input.times) };
  },
});

const started = { status: 202, body: { runId: 'run-t-0123456789abcdef0123', status: 'queued', links: {} } };

describe('the typed client (fake fetch)', () => {
  it('types start() from the agent: its input in, its result out; a name takes and gives unknown', async () => {
    const { c, seen } = client([
      started,
      { status: 200, body: run({ status: 'completed', result: { echoed: 'hi' } }) },
    ]);
    const handle = await c.runs.start(echo, { text: 'hi' }, { priority: 'interactive' });
    expectTypeOf(c.runs.start<typeof echo>)
      .parameter(1)
      .toEqualTypeOf<{ text: string; times?: number }>();
    const result = await handle.result();
    expectTypeOf(result).toEqualTypeOf<{ echoed: string }>();
    expect(result).toEqual({ echoed: 'hi' });
    expectTypeOf(c.runs.start<'echo'>)
      .parameter(1)
      .toBeUnknown();
    expect(seen[0]).toMatchObject({ method: 'POST', url: 'http://fairway.test/v1/runs' });
    expect(seen[0]!.headers.authorization).toBe('Bearer k-1');
    expect(JSON.parse(seen[0]!.body!)).toEqual({
      agent: 'echo',
      input: { text: 'hi' },
      priority: 'interactive',
    });
    // Every start carries an idempotency key, so a retried submission never starts a second run.
    expect(seen[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toMatchObject({
      method: 'GET',
      url: 'http://fairway.test/v1/runs/run-t-0123456789abcdef0123',
    });
  });

  it('maps the JSON error shape to one FairwayError: status, code, message, details, retryAfter', async () => {
    const details = [{ path: 'input.text', message: 'Invalid input: expected string, received number' }];
    const { c } = client([
      { status: 400, body: { error: { code: 'invalid_request', message: 'bad', details } } },
    ]);
    const err = await c.runs.start('echo', { text: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FairwayError);
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_request',
      message: 'bad',
      details,
      retryAfter: undefined,
    });

    const { c: c2 } = client([
      { status: 404, body: { error: { code: 'unknown_agent', message: 'no such agent' } } },
    ]);
    await expect(c2.runs.start('nope', {})).rejects.toMatchObject({ status: 404, code: 'unknown_agent' });

    const { c: c3 } = client([{ status: 502, body: '<html>bad gateway</html>' }]);
    await expect(c3.runs.get('run-x')).rejects.toMatchObject({ status: 502, code: 'unexpected_response' });
    // Not the API at all (a proxy's page): 200 with HTML is no answer either.
    const { c: c4 } = client([{ status: 200, body: '<html>sign in</html>' }]);
    await expect(c4.runs.get('run-x')).rejects.toMatchObject({ status: 200, code: 'unexpected_response' });
  });

  it('retries a 429 after its Retry-After, with the same idempotency key, and gives up after maxRetries', async () => {
    const shed = {
      status: 429,
      body: { error: { code: 'rate_limited', message: 'slow down' } },
      headers: { 'retry-after': '0' },
    };
    const { c, seen } = client([shed, shed, started]);
    const handle = await c.runs.start(echo, { text: 'x' }, { idempotencyKey: 'key-1' });
    expect(handle.runId).toBe('run-t-0123456789abcdef0123');
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['key-1', 'key-1', 'key-1']);

    const { c: c2, seen: seen2 } = client([shed, shed, shed], { maxRetries: 2 });
    await expect(c2.runs.start(echo, { text: 'x' })).rejects.toMatchObject({
      status: 429,
      code: 'rate_limited',
      retryAfter: 0,
    });
    expect(seen2).toHaveLength(3);
  });

  it('does not wait out a Retry-After longer than maxRetryAfterSeconds', async () => {
    const { c, seen } = client(
      [
        {
          status: 429,
          body: { error: { code: 'budget_exhausted', message: 'spent' } },
          headers: { 'retry-after': '3600' },
        },
      ],
      { maxRetryAfterSeconds: 5 },
    );
    await expect(c.runs.start(echo, { text: 'x' })).rejects.toMatchObject({
      code: 'budget_exhausted',
      retryAfter: 3600,
    });
    expect(seen).toHaveLength(1);
  });

  it('retries a 503 or no answer only for repeatable requests; a decision is sent once', async () => {
    const down = {
      status: 503,
      body: { error: { code: 'unavailable', message: 'away' } },
      headers: { 'retry-after': '0' },
    };
    const { c, seen } = client([down, new TypeError('fetch failed'), { status: 200, body: run() }]);
    expect((await c.runs.get('run-t-0123456789abcdef0123')).status).toBe('queued');
    expect(seen).toHaveLength(3);

    const { c: c2, seen: seen2 } = client([down]);
    await expect(c2.runs.handle('run-x').approve('ok')).rejects.toMatchObject({
      status: 503,
      code: 'unavailable',
    });
    expect(seen2).toHaveLength(1);
    expect(JSON.parse(seen2[0]!.body!)).toEqual({ note: 'ok' });

    const { c: c3 } = client([new TypeError('fetch failed')]);
    await expect(c3.runs.cancel('run-x')).rejects.toMatchObject({ status: 0, code: 'network' });
  });

  it('times out an attempt that gets no answer', async () => {
    const hang = (async (_i: unknown, init?: RequestInit) =>
      new Promise<Response>((_r, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error)),
      )) as typeof fetch;
    const c = createClient({ baseUrl: 'http://x', apiKey: 'k', fetch: hang, timeoutMs: 50, maxRetries: 0 });
    await expect(c.runs.get('run-x')).rejects.toMatchObject({ status: 0, code: 'timeout' });
  });

  it('result() throws run_failed, run_cancelled and run_rejected with the run; throwOnReject: false resolves', async () => {
    const failed = run({ status: 'failed', error: { code: 'tool_refused', message: 'no' } });
    const { c } = client([
      { status: 200, body: run({ status: 'running' }) },
      { status: 200, body: failed },
    ]);
    const err = (await c.runs
      .handle('run-x')
      .result({ intervalMs: 1 })
      .catch((e: unknown) => e)) as FairwayError;
    expect(err).toMatchObject({ code: 'run_failed', status: 0, details: failed.error });
    expect(err.run?.status).toBe('failed');

    const { c: c2 } = client([{ status: 200, body: run({ status: 'cancelled' }) }]);
    await expect(c2.runs.handle('run-x').result()).rejects.toMatchObject({ code: 'run_cancelled' });

    const rejected = run({
      status: 'completed',
      result: { published: false },
      gate: { decision: 'reject', decidedBy: 'key-9' },
    });
    const { c: c3 } = client([
      { status: 200, body: rejected },
      { status: 200, body: rejected },
    ]);
    await expect(c3.runs.handle('run-x').result()).rejects.toMatchObject({
      code: 'run_rejected',
      message: expect.stringContaining('key-9'),
    });
    expect(await c3.runs.handle('run-x').result({ throwOnReject: false })).toEqual({ published: false });
  });

  it('waitFor() stops at the asked status or at the end, and result() gives up with wait_timeout', async () => {
    const gated = run({ status: 'awaiting_approval', gate: { proposal: { answer: 42 } } });
    const { c } = client([
      { status: 200, body: run({ status: 'running' }) },
      { status: 200, body: gated },
    ]);
    expect(
      (await c.runs.handle('run-x').waitFor('awaiting_approval', { intervalMs: 1 })).gate?.proposal,
    ).toEqual({ answer: 42 });

    const { c: c2 } = client(
      Array.from({ length: 50 }, () => ({ status: 200, body: run({ status: 'running' }) })),
    );
    await expect(c2.runs.handle('run-x').result({ timeoutMs: 30, intervalMs: 5 })).rejects.toMatchObject({
      code: 'wait_timeout',
    });
  });

  it('lists with query parameters and signs an event with a webhook secret instead of the key', async () => {
    const { c, seen } = client([
      { status: 200, body: { items: [], nextCursor: null } },
      { status: 202, body: { eventId: 'e1' } },
    ]);
    await c.runs.list({ status: 'completed', limit: 5 });
    expect(seen[0]!.url).toBe('http://fairway.test/v1/runs?status=completed&limit=5');
    await c.events.send(
      { id: 'e1', type: 'deploy', source: 'ci' },
      { signed: { secret: 'whsec_x', tenant: 'acme' } },
    );
    expect(seen[1]!.url).toBe('http://fairway.test/v1/events?tenant=acme');
    expect(seen[1]!.headers.authorization).toBeUndefined();
    const t = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(seen[1]!.headers['Fairway-Signature'] ?? '');
    expect(t).not.toBeNull();
    const { createHmac } = await import('node:crypto');
    expect(t![2]).toBe(createHmac('sha256', 'whsec_x').update(`${t![1]}.${seen[1]!.body}`).digest('hex'));
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(10_500).toUTCString(), 0)).toBe(10);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
  });
});

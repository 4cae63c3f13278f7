import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { createModelClient, ModelErrorType } from '../../../src/activities/model-client';
import { createChatClient } from '../../../src/activities/chat-client';
import { ProviderErrorAnswer } from '../../../src/activities/call-outcome';
import { readBounded } from '../../../src/activities/provider/bounded-body';
import { MAX_PROVIDER_MESSAGE_CHARS, redactSecrets } from '../../../src/activities/provider/provider-text';

const KEY = 'sk-live-0123456789abcdefghijklmnopqrstuv';

/** A body of `total` bytes in 64 KiB chunks, counting the bytes the reader pulled and whether it cancelled. */
function stream(total: number, fill = 'a') {
  const seen = { pulled: 0, cancelled: false };
  const chunk = new TextEncoder().encode(fill.repeat(64 * 1024));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= total) return c.close();
      const part = chunk.subarray(0, Math.min(chunk.byteLength, total - sent));
      sent += part.byteLength;
      seen.pulled += part.byteLength;
      c.enqueue(part);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { body, seen };
}

function fetchAnswering(make: () => Response): typeof fetch {
  return (async () => make()) as unknown as typeof fetch;
}

function modelClient(make: () => Response, log?: { warn(obj: object, msg: string): void }) {
  return createModelClient({
    baseUrl: 'http://provider.test',
    apiKey: KEY,
    model: 'm',
    fetchImpl: fetchAnswering(make),
    onObservation: () => {},
    ...(log ? { log } : {}),
  });
}

async function failureOf(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => expect.fail('expected the call to fail'),
    (err: unknown) => err as Error,
  );
}

describe('provider answers are read with byte caps', () => {
  it('refuses a 20 MiB 2xx answer after the cap, cancelling the stream, as a retryable plain Error', async () => {
    const s = stream(20 * 1024 * 1024);
    const err = await failureOf(
      modelClient(() => new Response(s.body, { status: 200 })).complete({ runId: 'r', step: 0, tokens: 10 }),
    );
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect(err).not.toBeInstanceOf(ProviderErrorAnswer);
    expect(err.message).toMatch(/longer than 8388608 bytes/);
    expect(s.seen.cancelled).toBe(true);
    expect(s.seen.pulled).toBeLessThanOrEqual(8 * 1024 * 1024 + 128 * 1024);
  });

  it('does not read a 2xx answer whose Content-Length is over the cap', async () => {
    const s = stream(20 * 1024 * 1024);
    const res = new Response(s.body, {
      status: 200,
      headers: { 'content-length': String(20 * 1024 * 1024) },
    });
    const { truncated, text } = await readBounded(res, 1024);
    expect({ truncated, text }).toEqual({ truncated: true, text: '' });
    expect(s.seen.pulled).toBeLessThanOrEqual(256 * 1024);
  });

  it('reads a body under the cap whole, multi-byte characters across chunks intact', async () => {
    const text = 'é'.repeat(70_000);
    expect(await readBounded(new Response(text), 1_000_000)).toEqual({ text, truncated: false });
    const cut = await readBounded(new Response(text), 11);
    expect(cut.truncated).toBe(true);
    expect(cut.text.startsWith('ééééé')).toBe(true);
  });

  it('cuts a 5 MiB provider error message and redacts keys before the failure carries it', async () => {
    const message = `bad request for key ${KEY} token=abcdef123456 ` + 'x'.repeat(5 * 1024 * 1024);
    const warned: object[] = [];
    const err = await failureOf(
      modelClient(
        () =>
          new Response(JSON.stringify({ error: { type: 'invalid_request_error', message } }), {
            status: 400,
          }),
        { warn: (obj) => warned.push(obj) },
      ).complete({ runId: 'r', step: 0, tokens: 10 }),
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(ModelErrorType.rejected);
    expect(err.message.length).toBeLessThan(MAX_PROVIDER_MESSAGE_CHARS + 200);
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain('abcdef123456');
    expect(err.message).toContain('[redacted]');
    expect(err.message).toMatch(/characters cut/);
    const logged = JSON.stringify(warned);
    expect(warned).toHaveLength(1);
    expect(logged).not.toContain(KEY);
    expect(logged.length).toBeLessThan(10_000);
  });

  it('keeps the call key out of a 5xx that echoes it, and reads only the cap of an endless error body', async () => {
    const err = await failureOf(
      modelClient(
        () => new Response(`upstream failed; Authorization: Bearer ${KEY}`, { status: 502 }),
      ).complete({
        runId: 'r',
        step: 0,
        tokens: 10,
      }),
    );
    expect(err).toBeInstanceOf(ProviderErrorAnswer);
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain(KEY.slice(3));

    const s = stream(1024 * 1024 * 1024, 'e');
    const endless = await failureOf(
      modelClient(() => new Response(s.body, { status: 503 })).complete({ runId: 'r', step: 0, tokens: 10 }),
    );
    expect(endless).toBeInstanceOf(ProviderErrorAnswer);
    expect(s.seen.cancelled).toBe(true);
    expect(s.seen.pulled).toBeLessThanOrEqual(256 * 1024);
    expect(endless.message.length).toBeLessThan(MAX_PROVIDER_MESSAGE_CHARS + 200);
  });

  it('redacts an Anthropic key echoed in a 429 of the chat client', async () => {
    const anthropicKey = 'sk-ant-api03-ZYXWVUTSRQPONMLKJIHGFEDCBA0123456789';
    const chat = createChatClient({
      endpoints: [
        { name: 'claude', dialect: 'anthropic', baseUrl: 'http://provider.test', apiKey: anthropicKey },
      ],
      defaultModel: 'claude',
      onObservation: () => {},
      fetchImpl: fetchAnswering(
        () =>
          new Response(
            JSON.stringify({
              type: 'error',
              error: { type: 'rate_limit_error', message: `slow down ${anthropicKey}` },
            }),
            { status: 429 },
          ),
      ),
    });
    const err = await failureOf(
      chat.chat({
        runId: 'r',
        step: 0,
        request: { messages: [{ role: 'user', content: 'hi' }], maxTokens: 5 },
      }),
    );
    expect((err as ApplicationFailure).type).toBe(ModelErrorType.throttled);
    expect(err.message).not.toContain(anthropicKey);
    expect(err.message).toContain('slow down [redacted]');
  });

  it('redacts key shapes and long token runs, and leaves ordinary text alone', () => {
    expect(redactSecrets('api_key: "abcd1234efgh" ok')).toBe('api_key: "[redacted]" ok');
    expect(redactSecrets(`sig ${'a1'.repeat(30)} end`)).toBe('sig [redacted] end');
    expect(redactSecrets('The model is overloaded, please retry.')).toBe(
      'The model is overloaded, please retry.',
    );
    expect(redactSecrets('echo my-secret-value', ['my-secret-value'])).toBe('echo [redacted]');
  });
});

import { ApplicationFailure } from '@temporalio/common';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { certainlyUnbilled, ModelCallTimedOut } from '../../../src/activities/call-outcome';
import { createChatClient } from '../../../src/activities/chat-client';
import { createModelClient } from '../../../src/activities/model-client';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A provider that reads each call and never answers it (a gateway holding it). */
async function holdingProvider(): Promise<string> {
  const server = createServer((req) => req.resume());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const reject = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('expected the call to fail'),
    (err: unknown) => err,
  );

describe("the model client's own timeout", () => {
  it('gives up after timeoutMs with a retryable failure of unknown outcome', async () => {
    const url = await holdingProvider();
    const c = createModelClient({ baseUrl: url, model: 'sim-1', onObservation: () => undefined });
    const started = Date.now();
    const err = await reject(c.complete({ runId: 'run-t-1', step: 1, tokens: 50, timeoutMs: 150 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(err).toBeInstanceOf(ModelCallTimedOut);
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect((err as Error).message).toMatch(/did not answer run run-t-1 step 1 within 150 ms/);
    // It may have been served: charged its worst case, never dropped as unbilled.
    expect(certainlyUnbilled(err)).toBe(false);
  });

  it("an agent's model call gives up the same way, in either dialect", async () => {
    const url = await holdingProvider();
    const chat = createChatClient({
      endpoints: [
        { name: 'gpt', dialect: 'openai', baseUrl: url },
        { name: 'claude', dialect: 'anthropic', baseUrl: url },
      ],
      defaultModel: 'gpt',
      onObservation: () => undefined,
    });
    for (const model of ['gpt', 'claude']) {
      const request = { model, maxTokens: 8, messages: [{ role: 'user' as const, content: 'hi' }] };
      const err = await reject(chat.chat({ runId: 'run-t-2', step: 1, request, timeoutMs: 100 }));
      expect(err, model).toBeInstanceOf(ModelCallTimedOut);
    }
  });

  it("the activity's cancellation still aborts as a cancellation, not as a timeout", async () => {
    const url = await holdingProvider();
    const c = createModelClient({ baseUrl: url, model: 'sim-1', onObservation: () => undefined });
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error('activity cancelled')), 50);
    const err = await reject(
      c.complete({ runId: 'run-t-3', step: 1, tokens: 50, signal: cancel.signal, timeoutMs: 5_000 }),
    );
    expect(err).not.toBeInstanceOf(ModelCallTimedOut);
  });
});

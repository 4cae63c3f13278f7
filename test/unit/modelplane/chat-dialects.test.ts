import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient } from '../../../src/activities/chat-client';
import type { ModelCallSample } from '../../../src/activities/observations';
import { worstCaseTokens } from '../../../src/activities/provider/tokenizer';
import type { ModelRequest } from '../../../src/contract/chat-model';
import { simulateCompletion } from '../../../src/standins/modelplane/completions';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function setup(tpm = 1_000_000) {
  const sim = await startSimulator({
    tpm,
    rpm: 10_000,
    seed: 1,
    port: 0,
    latency: { baseMs: 0, perTokenMs: 0 },
  });
  running.push(sim);
  const samples: ModelCallSample[] = [];
  const client = createChatClient({
    endpoints: [
      { name: 'gpt', dialect: 'openai', baseUrl: sim.url, apiKey: 'k' },
      { name: 'claude', dialect: 'anthropic', baseUrl: `${sim.url}/v1`, apiKey: 'k' },
    ],
    defaultModel: 'gpt',
    onObservation: (s) => samples.push(s),
  });
  return { sim, client, samples };
}

const ask = (content: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content },
  ],
  maxTokens: 200,
  ...extra,
});

describe('the simulator in both dialects, through the chat client', () => {
  it('answers the deterministic completion of the prompt, billed at its usage', async () => {
    const { sim, client, samples } = await setup();
    const req = ask('What does the governor do?');
    let step = 0;
    for (const model of ['gpt', 'claude']) {
      const { completion } = await client.chat({
        tenant: 'acme',
        runId: 'r1',
        step: step++,
        request: { ...req, model },
      });
      const expected = simulateCompletion(req, model);
      expect(completion.text).toBe(expected.text);
      expect(completion.text).toMatch(/^Simulated reply [0-9a-f]{8}:/);
      expect(completion.finishReason).toBe('stop');
      expect(completion.usage).toEqual(expected.usage);
      expect(completion.model).toBe(model);
    }
    // Another prompt, another reply.
    const other = await client.chat({ runId: 'r1', step: step++, request: ask('Something else entirely.') });
    expect(other.completion.text).not.toBe(simulateCompletion(req, 'gpt').text);
    const bill = sim.state.stats().bill;
    expect(bill.acme).toBe(2 * simulateCompletion(req, 'gpt').usage.totalTokens);
    // Both dialects' headers reach the governor in one sample shape.
    expect(samples).toHaveLength(3);
    for (const s of samples) {
      expect(s.throttled).toBe(false);
      expect(s.limitTokens).toBeGreaterThan(0);
      expect(s.remainingTokens).toBeGreaterThan(0);
    }
  });

  it('reserves at least what the simulator bills, for prompts of every length', async () => {
    const { client } = await setup();
    let step = 0;
    for (const n of [1, 10, 100, 1000]) {
      for (const [model, dialect] of [
        ['gpt', 'openai'],
        ['claude', 'anthropic'],
      ] as const) {
        const request = { ...ask('Explain the ledger. '.repeat(n)), model, maxTokens: 20 };
        const { completion } = await client.chat({ runId: 'r2', step: step++, request });
        expect(completion.usage.totalTokens).toBeLessThanOrEqual(worstCaseTokens(request, dialect));
        expect(completion.usage.outputTokens).toBeLessThanOrEqual(20);
        expect(completion.usage.inputTokens).toBeGreaterThan(n * 4);
      }
    }
  });

  it('calls a tool when the prompt asks, in both dialects, and carries the conversation on', async () => {
    const { client } = await setup();
    const tools = [{ name: 'search', description: 'Searches.', parameters: { type: 'object' } }];
    let step = 0;
    for (const model of ['gpt', 'claude']) {
      const req: ModelRequest = { ...ask('Please use tool search for fairness'), tools, model };
      const first = (await client.chat({ runId: 'r3', step: step++, request: req })).completion;
      expect(first.finishReason).toBe('tool_calls');
      expect(first.toolCalls).toEqual([
        {
          id: expect.stringMatching(/^call_/),
          name: 'search',
          arguments: { input: 'Please use tool search for fairness' },
        },
      ]);
      const next: ModelRequest = {
        ...req,
        messages: [
          ...req.messages,
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          { role: 'tool', content: 'found 3 pages', toolCallId: first.toolCalls[0]!.id },
        ],
      };
      const second = (await client.chat({ runId: 'r3', step: step++, request: next })).completion;
      expect(second.finishReason).toBe('stop');
      expect(second.toolCalls).toEqual([]);
      expect(second.text).toBe(simulateCompletion(next, model).text);
      const named = await client.chat({
        runId: 'r3',
        step: step++,
        request: { ...ask('hi'), tools, toolChoice: { name: 'search' }, model },
      });
      expect(named.completion.toolCalls[0]?.name).toBe('search');
    }
  });

  it('cuts at maxTokens with finish reason length', async () => {
    const { client } = await setup();
    const { completion } = await client.chat({
      runId: 'r4',
      step: 0,
      request: { ...ask('x'), maxTokens: 5, model: 'claude' },
    });
    expect(completion.finishReason).toBe('length');
    expect(completion.usage.outputTokens).toBeLessThanOrEqual(5);
  });

  it('throttles the Messages endpoint as Anthropic does: 429, retry-after, anthropic-ratelimit-*', async () => {
    const { client, samples } = await setup(300);
    const request = { ...ask('Explain the ledger. '.repeat(30)), model: 'claude', maxTokens: 100 };
    await client.chat({ runId: 'r5', step: 0, request });
    const err = await client.chat({ runId: 'r5', step: 1, request }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('ModelThrottled');
    expect((err as ApplicationFailure).nextRetryDelay).toBeGreaterThanOrEqual(1000);
    const last = samples[samples.length - 1]!;
    expect(last.throttled).toBe(true);
    expect(last.retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect(last.limitTokens).toBeGreaterThan(0);
  });

  it("answers Anthropic's error shape and headers on the wire", async () => {
    const { sim } = await setup();
    const post = (body: unknown) =>
      fetch(`${sim.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await post({ model: 'm', messages: [] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const ok = await post({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('anthropic-ratelimit-tokens-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(ok.headers.get('anthropic-ratelimit-input-tokens-remaining')).toMatch(/^\d+$/);
    expect(await ok.json()).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' });
    sim.state.spendCap = true;
    const capped = await post({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] });
    expect(capped.status).toBe(402);
    expect(await capped.json()).toMatchObject({ error: { type: 'billing_error' } });
  });
  it('refuses a rejected key in either dialect: a retryable ModelKeyRefused, sampled for the breaker', async () => {
    const { sim, client, samples } = await setup();
    const admin = (body: unknown) =>
      fetch(`${sim.url}/admin/rejected-key`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const [status, type] of [
      [401, 'authentication_error'],
      [403, 'permission_error'],
    ] as const) {
      expect((await admin({ enabled: true, status })).status).toBe(200);
      const raw = await fetch(`${sim.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(raw.status).toBe(status);
      expect(await raw.json()).toMatchObject({ type: 'error', error: { type } });
      for (const model of ['gpt', 'claude']) {
        const err = await client.chat({ runId: 'r', step: 1, request: ask('hi', { model }) }).catch((e) => e);
        expect(err).toBeInstanceOf(ApplicationFailure);
        expect(err).toMatchObject({ type: 'ModelKeyRefused', nonRetryable: false });
        // Without an attempt number, the wait is the longest between probes (the run backs off up to it).
        expect((err as ApplicationFailure).nextRetryDelay).toBe(60_000);
      }
    }
    expect(samples.map((x) => x.fault)).toEqual(['key', 'key', 'key', 'key']);
    expect((await admin({ enabled: false })).status).toBe(200);
    await client.chat({ runId: 'r', step: 2, request: ask('hi', { model: 'claude' }) });
    const stats = (await (await fetch(`${sim.url}/admin/stats`)).json()) as { refused: number };
    expect(stats.refused).toBe(6);
  });
});

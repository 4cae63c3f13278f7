import { describe, expect, it } from 'vitest';
import { chat, getJson, post, useHandClockSimulator } from './sim-client';

const start = useHandClockSimulator(1);

describe('model-plane simulator: chat completions', () => {
  it('answers in the OpenAI shape with usage = prompt estimate + max_tokens', async () => {
    const { url } = await start(10_000, 100);
    const r = await chat(url, 90, 40);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'chat.completion',
      model: 'sim-1',
      usage: { prompt_tokens: 10, completion_tokens: 90, total_tokens: 100 },
    });
    expect(r.body.choices).toEqual([
      expect.objectContaining({ index: 0, message: expect.objectContaining({ role: 'assistant' }) }),
    ]);
  });

  it('sends sane rate-limit headers on success', async () => {
    const { url } = await start(1000, 100);
    const r = await chat(url, 90);
    expect(r.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
    expect(r.headers.get('x-ratelimit-remaining-tokens')).toBe('900');
    // 100 tokens at 1000 per minute refill in 6 s; one request at 100 per minute in 600 ms.
    expect(r.headers.get('x-ratelimit-reset-tokens')).toBe('6s');
    expect(r.headers.get('x-ratelimit-limit-requests')).toBe('100');
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('99');
    expect(r.headers.get('x-ratelimit-reset-requests')).toBe('600ms');
    expect(r.headers.get('retry-after')).toBeNull();
  });

  it('enforces tokens per minute with 429, retry-after and an OpenAI error, and refills over time', async () => {
    const { url, clock } = await start(1000, 1000);
    for (let i = 0; i < 10; i += 1) expect((await chat(url, 90)).status).toBe(200);
    const over = await chat(url, 90);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('6');
    expect(over.headers.get('retry-after-ms')).toBe('6000');
    expect(over.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(over.headers.get('x-ratelimit-reset-tokens')).toBe('1m0s');
    expect(over.body.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' });
    expect(over.body.error?.message).toMatch(/tokens/);

    clock.advance(4500);
    const partly = await chat(url, 90);
    expect(partly.status).toBe(429);
    expect(partly.headers.get('retry-after-ms')).toBe('1500');
    expect(partly.headers.get('retry-after')).toBe('2');
    clock.advance(1499);
    const early = await chat(url, 90);
    expect(early.status).toBe(429);
    expect(early.headers.get('retry-after')).toBe('1');
    expect(early.headers.get('retry-after-ms')).toBe('1');
    clock.advance(1);
    expect((await chat(url, 90)).status).toBe(200);
  });

  it('enforces requests per minute independently of tokens', async () => {
    const { url, clock } = await start(1_000_000, 3);
    for (let i = 0; i < 3; i += 1) expect((await chat(url, 1)).status).toBe(200);
    const over = await chat(url, 1);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after-ms')).toBe('20000');
    expect(over.headers.get('retry-after')).toBe('20');
    expect(over.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(over.body.error?.message).toMatch(/requests/);
    clock.advance(20_000);
    expect((await chat(url, 1)).status).toBe(200);
  });

  it('rejects malformed requests with 400 invalid_request listing the fields', async () => {
    const { url } = await start(1000, 100);
    const r = await post(`${url}/v1/chat/completions`, { model: 'sim-1', messages: [], max_tokens: -1 });
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe('invalid_request');
    const paths = (r.body.error?.details as { path: string }[]).map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['messages', 'max_tokens']));
    const broken = await post(`${url}/v1/chat/completions`, '{"model":');
    expect(broken.status).toBe(400);
    expect(broken.body.error?.code).toBe('invalid_request');
  });

  it('serves /healthz', async () => {
    const { url } = await start(1000, 100);
    expect(await getJson(`${url}/healthz`)).toEqual({ ok: true });
  });
});

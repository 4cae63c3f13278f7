import { describe, expect, it } from 'vitest';
import { chat, getJson, post, useHandClockSimulator } from './sim-client';

const start = useHandClockSimulator(7);

describe('model-plane simulator: admin', () => {
  it('counts calls answered, calls throttled and tokens served', async () => {
    const { url } = await start(250, 100);
    expect(await getJson(`${url}/admin/stats`)).toEqual({
      calls: 0,
      throttled: 0,
      refused: 0,
      tokens: 0,
      dropped: 0,
      held: 0,
      earlyRetries: 0,
      quota: { tpm: 250, rpm: 100 },
      bill: {},
      billedAgain: {},
      cut: {},
      headerDialect: 'openai',
      waitSignal: 'standard',
      window: 'rolling',
      holdMs: 0,
      rateLimitHeaders: true,
      bystander: null,
    });
    await chat(url, 90);
    await chat(url, 90);
    await chat(url, 90);
    expect(await getJson(`${url}/admin/stats`)).toEqual({
      calls: 3,
      throttled: 1,
      refused: 0,
      tokens: 200,
      dropped: 0,
      held: 0,
      earlyRetries: 0,
      quota: { tpm: 250, rpm: 100 },
      bill: { '': 200 },
      billedAgain: {},
      cut: {},
      headerDialect: 'openai',
      waitSignal: 'standard',
      window: 'rolling',
      holdMs: 0,
      rateLimitHeaders: true,
      bystander: null,
    });
  });

  it('switches the hard spend cap: 429 insufficient_quota without retry-after, then back', async () => {
    const { url } = await start(100_000, 100);
    expect(await post(`${url}/admin/spend-cap`, { enabled: true })).toMatchObject({
      status: 200,
      body: { enabled: true },
    });
    const capped = await chat(url, 10);
    expect(capped.status).toBe(429);
    expect(capped.headers.get('retry-after')).toBeNull();
    expect(capped.headers.get('retry-after-ms')).toBeNull();
    expect(capped.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect(capped.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });

    await post(`${url}/admin/spend-cap`, { enabled: false });
    expect((await chat(url, 10)).status).toBe(200);
    expect(await getJson(`${url}/admin/stats`)).toMatchObject({ calls: 2, throttled: 1, tokens: 20 });
    expect((await post(`${url}/admin/spend-cap`, { enabled: 'yes' })).status).toBe(400);
  });

  it('changes the quota live: a cut throttles at once, a raise lets the big call through', async () => {
    const { url, clock } = await start(10_000, 100);
    const cut = await post(`${url}/admin/capacity`, { tpm: 200 });
    expect(cut).toMatchObject({ status: 200, body: { quota: { tpm: 200, rpm: 100 } } });
    expect(await getJson(`${url}/admin/stats`)).toMatchObject({ quota: { tpm: 200, rpm: 100 } });

    const big = await chat(url, 290);
    expect(big.status).toBe(429);
    expect(big.headers.get('x-ratelimit-limit-tokens')).toBe('200');
    expect(Number(big.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    await post(`${url}/admin/capacity`, { tpm: 6000 });
    // The bucket kept the 200 it had; 100 more at 100 per second take one second.
    clock.advance(999);
    expect((await chat(url, 290)).status).toBe(429);
    clock.advance(1);
    expect((await chat(url, 290)).status).toBe(200);
  });

  it.each([[{}], [{ tpm: -1 }], [{ tpm: 'lots' }], [{ tpm: 1.5 }], [{ tpm: 10, extra: 1 }]])(
    'rejects capacity %j with 400 invalid_request and details',
    async (body) => {
      const { url } = await start(1000, 100);
      const r = await post(`${url}/admin/capacity`, body);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_request' });
      expect(Array.isArray(r.body.error?.details)).toBe(true);
      expect(await getJson(`${url}/admin/stats`)).toMatchObject({ quota: { tpm: 1000, rpm: 100 } });
    },
  );

  it("states a 429's wait only in a vendor header, or only in the error text, as told", async () => {
    const { url } = await start(100, 100);
    await chat(url, 90);
    expect(await post(`${url}/admin/wait-signal`, { mode: 'vendor-header' })).toMatchObject({
      status: 200,
      body: { waitSignal: 'vendor-header' },
    });
    const vendor = await chat(url, 90);
    expect(vendor.status).toBe(429);
    const names = [...vendor.headers.keys()];
    expect(vendor.headers.get('llm_provider-retry-after')).toMatch(/^[1-9]\d*$/);
    expect(names.filter((n) => /retry-after|ratelimit/.test(n))).toEqual(['llm_provider-retry-after']);
    expect(vendor.body.error?.message).not.toMatch(/again in/);

    await post(`${url}/admin/wait-signal`, { mode: 'body' });
    const body = await chat(url, 90);
    expect(body.status).toBe(429);
    expect([...body.headers.keys()].filter((n) => /retry-after|ratelimit/.test(n))).toEqual([]);
    expect(body.body.error?.message).toMatch(/Please try again in \d[\d.]*(ms|s|m\d)/);

    expect(await post(`${url}/admin/wait-signal`, { mode: 'later' })).toMatchObject({ status: 400 });
    await post(`${url}/admin/wait-signal`, { mode: 'standard' });
    expect((await chat(url, 90)).headers.get('retry-after-ms')).not.toBeNull();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/activities/provider/header-values';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import { chat, getJson, post } from './sim-client';

/** Gateways that behave unlike a provider: held calls, calendar-minute windows. Real clock, no latency. */
describe('model-plane simulator: gateway modes', () => {
  let sim: RunningSimulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });
  const start = async (opts: { tpm: number; holdMs?: number; window?: 'rolling' | 'calendar' }) => {
    sim = await startSimulator({
      rpm: 10_000,
      seed: 3,
      latency: { baseMs: 0, perTokenMs: 0 },
      port: 0,
      ...opts,
    });
    return sim.url;
  };
  type Stats = { calls: number; throttled: number; held: number; tokens: number; window: string };

  it('holds a call over the limit until its quota is back, and answers it 200', async () => {
    // 1,200 tokens a minute is 20 a second: a 30-token call after an exhausted bucket waits ~1.5 s.
    const url = await start({ tpm: 1200, holdMs: 20_000 });
    expect((await chat(url, 1190)).status).toBe(200);
    const t = Date.now();
    const held = await chat(url, 20);
    expect(held.status).toBe(200);
    expect(Date.now() - t).toBeGreaterThanOrEqual(1000);
    const stats = (await getJson(`${url}/admin/stats`)) as Stats;
    expect(stats).toMatchObject({ calls: 2, throttled: 0, held: 1 });
  });

  it('answers 429 once the hold runs out before the quota is back', async () => {
    const url = await start({ tpm: 1200, holdMs: 0 });
    expect((await post(`${url}/admin/hold`, { ms: 300 })).body).toEqual({ holdMs: 300, held: 0 });
    expect((await chat(url, 1190)).status).toBe(200);
    const t = Date.now();
    const refused = await chat(url, 600); // 30 s away
    expect(refused.status).toBe(429);
    expect(Date.now() - t).toBeGreaterThanOrEqual(300);
    expect((await getJson(`${url}/admin/stats`)) as Stats).toMatchObject({ throttled: 1, held: 1 });
  });

  it('bills nothing for a held call whose caller went away', async () => {
    const url = await start({ tpm: 1200, holdMs: 20_000 });
    expect((await chat(url, 1190)).status).toBe(200);
    const gone = new AbortController();
    const call = chat(url, 600, 40, gone.signal).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    gone.abort();
    expect(await call).toBeInstanceOf(Error);
    const before = (await getJson(`${url}/admin/stats`)) as Stats;
    // The held call would have been served ~30 s later; it is gone at the next look.
    await new Promise((r) => setTimeout(r, 100));
    expect((await getJson(`${url}/admin/bill`)) as { total: number }).toMatchObject({ total: before.tokens });
    expect(before.held).toBe(1);
  });

  it('refuses a hold that is not a whole number of ms up to ten minutes, and changes nothing', async () => {
    const url = await start({ tpm: 1200, holdMs: 50 });
    for (const body of [{ ms: -1 }, { ms: 600_001 }, { ms: 1.5 }, { ms: '5' }, {}, { ms: 5, x: 1 }]) {
      const res = await post(`${url}/admin/hold`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.code).toBe('invalid_request');
    }
    expect((await getJson(`${url}/admin/stats`)) as { holdMs: number }).toMatchObject({ holdMs: 50 });
  });

  it('strips rate-limit headers when told, and sends them again when told', async () => {
    const url = await start({ tpm: 1200 });
    expect((await post(`${url}/admin/headers`, { rateLimit: false })).body).toEqual({
      rateLimitHeaders: false,
    });
    const bare = await chat(url, 100);
    expect(bare.status).toBe(200);
    expect([...bare.headers.keys()].filter((h) => h.includes('ratelimit'))).toEqual([]);
    expect((await post(`${url}/admin/headers`, { rateLimit: 'no' })).status).toBe(400);
    await post(`${url}/admin/headers`, { rateLimit: true });
    expect((await chat(url, 100)).headers.get('x-ratelimit-limit-tokens')).toBe('1200');
  });

  it('counts a calendar window: the reset header is the time to the next minute of the clock', async () => {
    const url = await start({ tpm: 1200, window: 'calendar' });
    const ok = await chat(url, 100);
    const toMinute = 60_000 - (Date.now() % 60_000);
    const ms = parseDuration(ok.headers.get('x-ratelimit-reset-tokens')) ?? -1;
    expect(Math.abs(ms - toMinute)).toBeLessThan(2_000);
    expect(((await getJson(`${url}/admin/stats`)) as Stats).window).toBe('calendar');
  });
});

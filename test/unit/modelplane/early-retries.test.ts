import { afterEach, describe, expect, it } from 'vitest';
import { CALL_KEY_HEADER } from '../../../src/activities/provider/call-key';
import { RetryTracker } from '../../../src/standins/modelplane/retry-tracker';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import { getJson, handClock } from './sim-client';
import type { SimAnswer } from './sim-client';

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(tpm: number) {
  const clock = handClock();
  sim = await startSimulator({
    tpm,
    rpm: 1000,
    seed: 3,
    latency: { baseMs: 0, perTokenMs: 0 },
    now: clock.now,
    port: 0,
  });
  return { url: sim.url, clock };
}

/** A call of 10 prompt + `maxTokens` tokens, keyed as the step `key` (no key: an anonymous call). */
async function keyed(url: string, key: string | undefined, maxTokens: number): Promise<SimAnswer> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { [CALL_KEY_HEADER]: key } : {}) },
    body: JSON.stringify({
      model: 'sim-1',
      messages: [{ role: 'user', content: 'x'.repeat(40) }],
      max_tokens: maxTokens,
    }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as SimAnswer['body'] };
}

describe('model-plane simulator: retries before Retry-After', () => {
  it('counts a step that comes back before the wait it was given, and only that', async () => {
    const { url, clock } = await start(600); // 10 tokens per second
    expect((await keyed(url, 'run-1:1', 590)).status).toBe(200); // the bucket is empty now
    const refused = await keyed(url, 'run-1:2', 40);
    expect(refused.status).toBe(429);
    const waitMs = Number(refused.headers.get('retry-after-ms'));
    expect(waitMs).toBe(5000);

    clock.advance(waitMs - 1);
    expect((await keyed(url, 'run-1:2', 40)).status).toBe(429); // 1 ms early: counted
    expect(await getJson(`${url}/admin/stats`)).toMatchObject({ earlyRetries: 1 });

    clock.advance(waitMs); // on time for the wait the early call was given
    expect((await keyed(url, 'run-1:2', 40)).status).toBe(200);
    // Another step, and calls without a key, owe no wait.
    expect((await keyed(url, 'run-2:1', 1)).status).toBe(200);
    expect((await keyed(url, undefined, 1)).status).toBe(200);
    expect(await getJson(`${url}/admin/stats`)).toMatchObject({ calls: 6, throttled: 2, earlyRetries: 1 });
  });

  it('forgets a step once it was served', () => {
    const t = new RetryTracker();
    t.throttled('a:1', 1000, 500);
    t.arrived('a:1', 1500);
    t.served('a:1');
    t.arrived('a:1', 1501);
    t.arrived(undefined, 0);
    expect(t.earlyRetries).toBe(0);
    t.throttled('a:1', 2000, 500);
    t.arrived('a:1', 2499);
    expect(t.earlyRetries).toBe(1);
  });
});

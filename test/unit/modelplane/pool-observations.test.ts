import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient } from '../../../src/activities/chat-client';
import { PoolObservations } from '../../../src/activities/observations';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

const simulator = async (rpm: number) => {
  const sim = await startSimulator({
    tpm: 1_000_000,
    rpm,
    seed: 1,
    port: 0,
    latency: { baseMs: 0, perTokenMs: 0 },
  });
  running.push(sim);
  return sim;
};

/**
 * A worker reports what its calls showed per model pool: a throttle of one provider's model reaches
 * only that pool's governor, and the default pool's calls name no pool (as before pools existed).
 */
describe("a worker's observations, one per model pool", () => {
  it("tags each call with its model's pool and drains one observation per pool that saw calls", async () => {
    const calm = await simulator(10_000);
    const stormy = await simulator(1);
    const window = new PoolObservations();
    const client = createChatClient({
      endpoints: [
        { name: 'gpt', dialect: 'openai', baseUrl: calm.url },
        { name: 'storm', dialect: 'openai', baseUrl: stormy.url, pool: 'storm' },
      ],
      defaultModel: 'gpt',
      maxPauseMs: 5_000,
      onObservation: (s) => window.add(s),
    });
    const request = (model: string) => ({
      model,
      maxTokens: 20,
      messages: [{ role: 'user' as const, content: 'Say hi.' }],
    });
    await client.chat({ tenant: 't', runId: 'r1', step: 1, request: request('gpt') });
    await client.chat({ tenant: 't', runId: 'r1', step: 2, request: request('storm') });
    // The second call in the storm pool's minute is refused (1 request a minute).
    await expect(
      client.chat({ tenant: 't', runId: 'r1', step: 3, request: request('storm') }),
    ).rejects.toThrow();
    const drained = window.drain(Date.now());
    expect(drained).toHaveLength(2);
    const byPool = new Map(drained.map((o) => [o.pool ?? '', o]));
    expect(byPool.get('')).toMatchObject({ calls: 1, throttled: 0 });
    expect(byPool.get('')).not.toHaveProperty('pool');
    expect(byPool.get('storm')).toMatchObject({ pool: 'storm', calls: 2, throttled: 1 });
    expect(window.drain(Date.now())).toEqual([]);
  });
});

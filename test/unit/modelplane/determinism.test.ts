import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';
import { chat } from './sim-client';

const running: RunningSimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** Ids and simulated latencies of five sequential calls. */
async function trace(seed: number): Promise<string[]> {
  const sim = await startSimulator({ tpm: 1_000_000, rpm: 1000, seed, port: 0 });
  running.push(sim);
  const out: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    const r = await chat(sim.url, 100 * (i + 1));
    out.push(`${String(r.body.id)} ${r.headers.get('openai-processing-ms')}`);
  }
  return out;
}

describe('model-plane simulator: seeded runs', () => {
  it('repeats ids and latencies for one seed and differs for another', async () => {
    const a = await trace(42);
    const b = await trace(42);
    const c = await trace(43);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
  });

  it('takes base + per-token latency, with at most 20% jitter', async () => {
    const sim = await startSimulator({
      tpm: 1_000_000,
      rpm: 1000,
      seed: 3,
      latency: { baseMs: 40, perTokenMs: 0.2 },
      port: 0,
    });
    running.push(sim);
    const started = performance.now();
    const r = await chat(sim.url, 90);
    const elapsed = performance.now() - started;
    // 40 ms + 100 tokens × 0.2 ms = 60 ms nominal.
    const simulated = Number(r.headers.get('openai-processing-ms'));
    expect(simulated).toBeGreaterThanOrEqual(48);
    expect(simulated).toBeLessThanOrEqual(72);
    expect(elapsed).toBeGreaterThanOrEqual(simulated - 2);
  });
});

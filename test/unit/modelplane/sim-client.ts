import { afterEach } from 'vitest';
import { DEFAULT_GOVERNOR, FleetScheduler } from '../../../src/scheduler';
import type { GovernorParams } from '../../../src/scheduler';
import { startSimulator } from '../../../src/standins/modelplane/server';
import type { RunningSimulator } from '../../../src/standins/modelplane/server';

/** Test helpers: plain HTTP calls against a running simulator. */
export interface SimAnswer {
  status: number;
  headers: Headers;
  body: { error?: { code?: string; type?: string; message?: string; details?: unknown } } & Record<
    string,
    unknown
  >;
}

/** Posts a chat completion whose prompt is `promptChars` characters (promptChars/4 tokens). */
export async function chat(
  url: string,
  maxTokens: number,
  promptChars = 40,
  signal?: AbortSignal,
): Promise<SimAnswer> {
  return post(
    `${url}/v1/chat/completions`,
    { model: 'sim-1', messages: [{ role: 'user', content: 'x'.repeat(promptChars) }], max_tokens: maxTokens },
    signal,
  );
}

export async function post(url: string, body: unknown, signal?: AbortSignal): Promise<SimAnswer> {
  const res = await fetch(url, {
    ...(signal ? { signal } : {}),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as SimAnswer['body'] };
}

export async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  return res.json();
}

/** A clock the test moves by hand, so refill is tested without sleeping. */
export function handClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

/** `start(tpm, rpm)` runs a simulator with no latency on a hand clock; each test's is closed after it. */
export function useHandClockSimulator(seed: number) {
  let sim: RunningSimulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });
  return async (tpm: number, rpm: number) => {
    const clock = handClock();
    sim = await startSimulator({
      tpm,
      rpm,
      seed,
      latency: { baseMs: 0, perTokenMs: 0 },
      now: clock.now,
      port: 0,
    });
    return { url: sim.url, clock };
  };
}

/** The policy core the storm tests feed: 50 slots, the default floors, the governor with `governor` over its defaults. */
export function stormCore(governor: Partial<GovernorParams>, now: number): FleetScheduler {
  return FleetScheduler.create(
    {
      settings: {
        concurrency: 50,
        floors: { standard: 0.1, batch: 0.05 },
        leaseTtlSeconds: 60,
        globalMaxQueued: 10_000,
      },
      governor: { ...DEFAULT_GOVERNOR, ...governor },
    },
    now,
  );
}

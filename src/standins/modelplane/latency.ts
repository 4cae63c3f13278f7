/** How long the simulated model takes: a base plus a per-token cost, with seeded jitter. */
export interface LatencyModel {
  baseMs: number;
  perTokenMs: number;
}

/** Small enough for tests and load runs, large enough that concurrency matters. */
export const DEFAULT_LATENCY: LatencyModel = { baseMs: 5, perTokenMs: 0.01 };

/** Jitter spreads each delay over ±20% of its nominal value. */
const JITTER = 0.2;

/** A seeded PRNG (mulberry32): the same seed gives the same sequence, so simulator runs repeat. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The delay in whole ms for a call of `tokens`, drawing one number from `random`. */
export function latencyMs(model: LatencyModel, tokens: number, random: () => number): number {
  const nominal = model.baseMs + model.perTokenMs * tokens;
  return Math.max(0, Math.round(nominal * (1 - JITTER + 2 * JITTER * random())));
}

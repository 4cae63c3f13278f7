import { seededRandom } from '../../src/standins/modelplane/latency';

/** Seeded PRNG (mulberry32), the simulator's own: the same seed gives the same workload everywhere. */
export const mulberry32 = seededRandom;

/** Standard normal by Box–Muller. */
export function normal(rnd: () => number): number {
  const u = Math.max(rnd(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
}

/** Exponential with the given mean. */
export function exponential(rnd: () => number, mean: number): number {
  return -Math.log(1 - rnd()) * mean;
}

/** Sampler of {0..n-1} with P(k) ∝ 1/(k+1)^s, by binary search on the cumulative weights. */
export function zipf(rnd: () => number, n: number, s: number): () => number {
  const cum = new Float64Array(n);
  let acc = 0;
  for (let k = 0; k < n; k++) cum[k] = acc += 1 / Math.pow(k + 1, s);
  return () => {
    const x = rnd() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cum[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Jain's fairness index of non-negative values: 1 when all equal, 1/n when one takes all. */
export function jain(xs: readonly number[]): number {
  if (xs.length === 0) return 1;
  let sum = 0;
  let sq = 0;
  for (const x of xs) {
    sum += x;
    sq += x * x;
  }
  return sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/** Nearest-rank percentile (p in [0, 100]) of unsorted values; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

/** Wall-clock stopwatch that accumulates across start/stop pairs. */
export class Stopwatch {
  ms = 0;
  time<T>(f: () => T): T {
    const t = performance.now();
    try {
      return f();
    } finally {
      this.ms += performance.now() - t;
    }
  }
}

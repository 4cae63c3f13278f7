import { describe, expect, it } from 'vitest';
import { failingWaitMs, REOFFER_AWAY_MAX_MS, REOFFER_FLOOR_MS } from '../../../src/workflows/run-admission';

const MAX_MS = 1_800_000; // the default RUN_REOFFER_MAX_SECONDS

/** The waits of `n` checks in a row that met `r`. */
function waits(r: Parameters<typeof failingWaitMs>[0], n: number): number[] {
  const out: number[] = [];
  let failing = 0;
  for (let i = 0; i < n; i++) out.push((failing = failingWaitMs(r, failing, MAX_MS)));
  return out;
}

describe('a queued run’s wait after a check that failed', () => {
  it('a check that succeeded waits the standing interval (0 here)', () => {
    expect(failingWaitMs({ state: 'known', retryAfterSeconds: 0 }, 40_000, MAX_MS)).toBe(0);
    expect(failingWaitMs({ state: 'queued', retryAfterSeconds: 0 }, 40_000, MAX_MS)).toBe(0);
  });

  it('a chain away or draining is checked again within the bound, however long it lasts: a resume or a new chain tells the run nothing', () => {
    const unanswered = waits({ state: 'unavailable', retryAfterSeconds: 10 }, 10);
    expect(unanswered.slice(0, 2)).toEqual([10_000, 20_000]);
    expect(Math.max(...unanswered)).toBe(REOFFER_AWAY_MAX_MS);
    // A draining chain's Retry-After is the lease TTL or the last lease's expiry, not the operator's resume.
    const draining = waits({ state: 'refused', code: 'draining', retryAfterSeconds: 600 }, 10);
    expect(Math.max(...draining)).toBe(REOFFER_AWAY_MAX_MS);
    expect(REOFFER_AWAY_MAX_MS).toBeLessThanOrEqual(30_000);
  });

  it("other refusals keep the scheduler's Retry-After, at least the floor, ×2 while refused, up to the cap", () => {
    expect(waits({ state: 'refused', code: 'unknown_tenant', retryAfterSeconds: 0 }, 3)).toEqual([
      REOFFER_FLOOR_MS,
      2 * REOFFER_FLOOR_MS,
      4 * REOFFER_FLOOR_MS,
    ]);
    const full = waits({ state: 'refused', code: 'queue_full', retryAfterSeconds: 120 }, 10);
    expect(full.slice(0, 2)).toEqual([120_000, 240_000]);
    expect(Math.max(...full)).toBe(MAX_MS);
  });

  it('a cap below the bound (short re-offer settings) still caps', () => {
    expect(failingWaitMs({ state: 'unavailable', retryAfterSeconds: 10 }, 0, 4_000)).toBe(4_000);
  });
});

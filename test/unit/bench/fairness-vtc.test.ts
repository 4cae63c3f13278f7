import { describe, expect, it } from 'vitest';
import { FairnessWindows } from '../../../bench/lib/fairness';

describe('FairnessWindows VTC spread', () => {
  const run = (lagTokens: number, rateBound = false) => {
    // Two tenants of weights 1 and 2, both backlogged in the standard lane throughout.
    const f = new FairnessWindows(Float64Array.from([1, 2]), 100, () => false, { maxCost: 1000, lagTokens });
    for (let i = 0; i < 1000; i++) {
      f.onQueued(0, 1);
      f.onQueued(1, 1);
    }
    // The first admission opens a window of 200 admissions; then tenant 1 gets three units to
    // tenant 0's one (1,000 tokens each): per weight 1,500 against 1,000 every four admissions.
    f.onAdmitted(0, 1, 1000, false);
    if (rateBound) f.rateBound();
    for (let i = 0; i < 50; i++) {
      f.onAdmitted(0, 1, 1000, false);
      for (let j = 0; j < 3; j++) f.onAdmitted(1, 1, 1000, false);
    }
    return f.summary()[1]!;
  };

  it('reports the largest spread of weight-normalised tokens and its share of the bound', () => {
    const lane = run(0);
    expect(lane.windows).toBe(1);
    // 50 units × 1,000 to tenant 0 (per weight 50,000); 150 × 1,000 / 2 to tenant 1 (75,000).
    expect(lane.vtc!.maxSpread).toBe(25_000);
    // Bound: 1,000/1 + 1,000/2.
    expect(lane.vtc!.maxSpreadOverBound).toBeCloseTo(25_000 / 1500);
  });

  it('leaves out of the spread a window in which the server was rate-bound, not out of Jain', () => {
    // A rate-bound server passes over a flow whose head costs more than the tokens left: the
    // spread is not bounded then (the single-core oracle read 3.7x its bound through a storm).
    const lane = run(0, true);
    expect(lane.windows).toBe(1);
    expect(lane.vtc).toEqual({ maxSpread: 0, maxSpreadOverBound: 0, rateBoundWindows: 1 });
  });

  it("widens the bound by the governor lag over the window's backlogged weight", () => {
    expect(run(3000).vtc!.maxSpreadOverBound).toBeCloseTo(25_000 / (1500 + (2 * 3000) / 3));
  });
});

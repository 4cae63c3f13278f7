import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FleetScheduler, UnitSubmission } from '../../../src/scheduler';
import { T0, makeFleet } from './helpers';

/*
 * Fairness keys inside one tenant (`key-queue.ts`), measured as Sheng et al. (OSDI 2024) measure
 * VTC: for two keys i and j continuously backlogged over an interval, the difference of the tokens
 * each was served there, each divided by its weight. Start-time fair queuing bounds it by
 * maxCost_i/w_i + maxCost_j/w_j (Goyal, Vin & Cheng 1996, Theorem 1): about 2 × the largest unit
 * cost with equal weights. The fleet admits one unit at a time (concurrency 1), so the admission
 * order is the scheduler's decision order and service is counted at admission.
 */

interface Unit {
  key: number;
  cost: number;
}

/**
 * Submits `plan[d]` before decision d and admits one unit a decision; returns the unit admitted at
 * each decision (null when none was).
 */
function drive(s: FleetScheduler, tenant: string, plan: Unit[][], decisions: number): (Unit | null)[] {
  const byId = new Map<string, Unit>();
  const out: (Unit | null)[] = [];
  let n = 0;
  let held: { runId: string; attempt: number; reserved: number } | undefined;
  for (let d = 0; d < decisions; d++) {
    const arrivals = (plan[d] ?? []).map((u): UnitSubmission => {
      const runId = `${tenant}-${n++}`;
      byId.set(runId, u);
      return { runId, tenant, priority: 'standard', cost: u.cost, fairnessKey: `k${u.key}` };
    });
    if (arrivals.length > 0) s.submit(arrivals, T0);
    if (held)
      s.release(
        [{ runId: held.runId, attempt: held.attempt, usedTokens: held.reserved, outcome: 'completed' }],
        T0,
      );
    const [a] = s.admit(T0);
    held = a;
    out.push(a ? byId.get(a.runId)! : null);
  }
  return out;
}

const scenario = fc
  .record({
    keys: fc.integer({ min: 2, max: 8 }),
    maxCost: fc.integer({ min: 1, max: 2000 }),
    seed: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 8, maxLength: 8 }),
  })
  .chain(({ keys, maxCost, seed }) =>
    fc.record({
      keys: fc.constant(keys),
      weights: fc.constant(seed.slice(0, keys)),
      maxCost: fc.constant(maxCost),
      /** Per decision, the units that arrive before it (a key joins late, or tops up its backlog). */
      plan: fc.array(
        fc.array(
          fc.record({
            key: fc.integer({ min: 0, max: keys - 1 }),
            cost: fc.integer({ min: 1, max: maxCost }),
          }),
          { maxLength: 3 },
        ),
        { minLength: 1, maxLength: 200 },
      ),
    }),
  );

/** Queued units per key before each decision, from the plan and the admissions. */
function backlogs(keys: number, plan: Unit[][], served: (Unit | null)[]): number[][] {
  const q = Array.from({ length: keys }, () => 0);
  const out: number[][] = [];
  for (let d = 0; d < served.length; d++) {
    for (const u of plan[d] ?? []) q[u.key]!++;
    out.push([...q]);
    const u = served[d];
    if (u) q[u.key]!--;
  }
  return out;
}

/**
 * The largest VTC difference between keys i and j over every interval in which both were
 * backlogged before each decision: the range of their weighted service difference there.
 */
function vtcDifference(
  i: number,
  j: number,
  w: number[],
  served: (Unit | null)[],
  queued: number[][],
): number {
  let worst = 0;
  let lo = 0;
  let hi = 0;
  let diff = 0;
  for (let d = 0; d < served.length; d++) {
    const both = queued[d]![i]! > 0 && queued[d]![j]! > 0;
    if (!both) {
      lo = hi = diff = 0;
      continue;
    }
    const u = served[d];
    if (u?.key === i) diff += u.cost / w[i]!;
    if (u?.key === j) diff -= u.cost / w[j]!;
    lo = Math.min(lo, diff);
    hi = Math.max(hi, diff);
    worst = Math.max(worst, hi - lo);
  }
  return worst;
}

/** Units each key holds at the start of (c). */
const PER_KEY = 300;

const jain = (x: number[]) =>
  x.reduce((a, b) => a + b, 0) ** 2 / (x.length * x.reduce((a, b) => a + b * b, 0));

function tenantFleet(weights: number[]) {
  const keyWeights = Object.fromEntries(weights.map((w, k) => [`k${k}`, w]));
  return makeFleet({ settings: { concurrency: 1 }, tenants: { a: { keyWeights } } });
}

describe('fairness keys inside a tenant: the VTC measure, starvation and Jain', () => {
  it('(a) keeps the VTC difference of two backlogged keys within maxCost_i/w_i + maxCost_j/w_j', () => {
    fc.assert(
      fc.property(scenario, ({ keys, weights, plan }) => {
        const served = drive(tenantFleet(weights), 'a', plan, plan.length + 400);
        const queued = backlogs(keys, plan, served);
        const maxCost = Array.from({ length: keys }, (_, k) =>
          Math.max(
            0,
            ...plan
              .flat()
              .filter((u) => u.key === k)
              .map((u) => u.cost),
          ),
        );
        for (let i = 0; i < keys; i++)
          for (let j = i + 1; j < keys; j++) {
            const bound = maxCost[i]! / weights[i]! + maxCost[j]! / weights[j]!;
            expect(vtcDifference(i, j, weights, served, queued)).toBeLessThanOrEqual(bound + 1e-9);
          }
      }),
      { numRuns: 200 },
    );
  });

  it('(b) serves every backlogged key within its fair turn: no key starves', () => {
    fc.assert(
      fc.property(scenario, ({ keys, weights, plan }) => {
        const served = drive(tenantFleet(weights), 'a', plan, plan.length + 400);
        const queued = backlogs(keys, plan, served);
        const maxCost = Math.max(...plan.flat().map((u) => u.cost), 0);
        const others = weights.reduce((a, b) => a + b, 0);
        // While key i waits for its next unit, another key j gets at most w_j × maxCost/w_i + maxCost
        // tokens (its tag starts no lower than the virtual time i was last served at).
        for (let i = 0; i < keys; i++) {
          const turn = (maxCost * (others - weights[i]!)) / weights[i]! + maxCost * (keys - 1);
          let waited = 0;
          let longest = 0;
          for (let d = 0; d < served.length; d++) {
            const u = served[d];
            if (queued[d]![i] === 0 || u?.key === i) waited = 0;
            else waited += u?.cost ?? 0;
            longest = Math.max(longest, waited);
          }
          expect(longest, `key ${i} waited ${longest} tokens`).toBeLessThanOrEqual(turn);
        }
        // And the run ends with nothing queued: every unit was admitted.
        expect(served.filter((u) => u !== null).length).toBe(plan.flat().length);
      }),
      { numRuns: 200 },
    );
  });

  it('(c) Jain’s index over backlogged keys’ weighted token service is ≥ 0.99', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 16 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 16, maxLength: 16 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: PER_KEY, maxLength: PER_KEY }),
        (keys, seed, costs) => {
          const weights = seed.slice(0, keys);
          // Every key backlogged with the same random costs; measured until one key empties.
          const plan: Unit[][] = [
            Array.from({ length: keys * PER_KEY }, (_, n) => ({
              key: n % keys,
              cost: costs[Math.floor(n / keys)]!,
            })),
          ];
          const served = drive(tenantFleet(weights), 'a', plan, keys * PER_KEY);
          const queued = backlogs(keys, plan, served);
          const service = Array.from({ length: keys }, () => 0);
          for (let d = 0; d < served.length && queued[d]!.every((q) => q > 0); d++)
            service[served[d]!.key]! += served[d]!.cost / weights[served[d]!.key]!;
          // All keys' weighted services lie within Δ = 2 × maxCost of each other (a), so their standard
          // deviation σ ≤ Δ/2 and J = μ² / (μ² + σ²) ≥ μ² / (μ² + Δ²/4): ≥ 0.9975 once the mean μ ≥ 10 Δ.
          const mu = service.reduce((a, b) => a + b, 0) / keys;
          const delta = 2 * Math.max(...costs);
          const floor = mu ** 2 / (mu ** 2 + (delta / 2) ** 2);
          const j = jain(service);
          expect(j).toBeGreaterThanOrEqual(floor - 1e-9);
          if (mu >= 10 * delta) expect(j).toBeGreaterThanOrEqual(0.99);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('(d) splitting a tenant’s units over many keys does not raise its share against another tenant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 500 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.integer({ min: 50, max: 1000 }), { minLength: 50, maxLength: 50 }),
        (spread, wa, wb, costs) => {
          const share = (keysOf: (n: number) => string) => {
            const s = makeFleet({
              settings: { concurrency: 1 },
              tenants: { a: { weight: wa }, b: { weight: wb } },
            });
            const n = 3000;
            s.submit(
              Array.from({ length: n }, (_, i) => ({
                runId: `a-${i}`,
                tenant: 'a',
                priority: 'standard' as const,
                cost: costs[i % costs.length]!,
                fairnessKey: keysOf(i),
              })),
              T0,
            );
            s.submit(
              Array.from({ length: n }, (_, i) => ({
                runId: `b-${i}`,
                tenant: 'b',
                priority: 'standard' as const,
                cost: 500,
              })),
              T0,
            );
            const tokens = { a: 0, b: 0 } as Record<string, number>;
            let held: { runId: string; attempt: number; reserved: number } | undefined;
            for (let d = 0; d < 2000; d++) {
              if (held)
                s.release(
                  [
                    {
                      runId: held.runId,
                      attempt: held.attempt,
                      usedTokens: held.reserved,
                      outcome: 'completed',
                    },
                  ],
                  T0,
                );
              const [a] = s.admit(T0);
              held = a;
              if (a) tokens[a.tenant]! += a.reserved;
            }
            return tokens.a! / (tokens.a! + tokens.b!);
          };
          const one = share(() => 'whale');
          const many = share((i) => `user-${i % spread}`);
          expect(Math.abs(many - one)).toBeLessThanOrEqual(0.05 * one);
          expect(Math.abs(one - wa / (wa + wb))).toBeLessThanOrEqual(0.05 * (wa / (wa + wb)));
        },
      ),
      { numRuns: 25 },
    );
  });
});

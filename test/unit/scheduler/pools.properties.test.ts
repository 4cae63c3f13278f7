import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GOVERNOR, PRIORITIES } from '../../../src/scheduler';
import type { FleetScheduler, ModelObservation, UnitSubmission } from '../../../src/scheduler';
import { T0, makeFleet } from './helpers';

const POOLS = ['', 'gpt', 'claude'] as const;

const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      tenant: fc.integer({ min: 0, max: 1 }),
      lane: fc.integer({ min: 1, max: 2 }),
      pool: fc.integer({ min: 0, max: 2 }),
      cost: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 5000, max: 19_800 })),
    }),
  },
  fc.record({
    kind: fc.constant('throttle' as const),
    pool: fc.integer({ min: 0, max: 2 }),
    waitMs: fc.integer({ min: 1000, max: 20_000 }),
  }),
  fc.record({ kind: fc.constant('release' as const), oldest: fc.boolean() }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 100, max: 8000 }) }),
);

const throttle = (pool: string, at: number, waitMs: number): ModelObservation => ({
  at,
  calls: 4,
  throttled: 4,
  maxRetryAfterMs: waitMs,
  retryUntil: at + waitMs,
  tokens: 0,
  ...(pool === '' ? {} : { pool }),
});

/**
 * Random submissions across three pools, throttles, releases and time: no unit is admitted while
 * its pool is paused, and each tenant's units of one lane and one pool are admitted in the order
 * they were submitted (a unit of another pool may go before a head whose pool admits nothing).
 */
describe('model pools: properties over random interleavings', () => {
  it('never admits from a paused pool; keeps each (tenant, lane, pool) in submission order', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 120 }), (ops) => {
        const s: FleetScheduler = makeFleet({
          settings: { concurrency: 12 },
          // A small bucket: large units do not fit at once and smaller ones behind them would.
          governor: { ...DEFAULT_GOVERNOR, maxPauseMs: 60_000, initialTokensPerMinute: 20_000 },
          tenants: { t0: { maxInFlight: 8 }, t1: { maxInFlight: 8 }, t2: { maxInFlight: 8 } },
        });
        let now = T0;
        let n = 0;
        const submitted = new Map<string, string[]>();
        const admittedOrder = new Map<string, string[]>();
        const poolOf = new Map<string, string>();
        const keyOf = new Map<string, string>();
        const inFlight: string[] = [];
        const pausedUntil = new Map<string, number>();
        const admit = () => {
          for (const a of s.admit(now)) {
            const pool = poolOf.get(a.runId)!;
            expect(now >= (pausedUntil.get(pool) ?? 0), `${a.runId} admitted in paused pool "${pool}"`).toBe(
              true,
            );
            const key = keyOf.get(a.runId)!;
            admittedOrder.set(key, [...(admittedOrder.get(key) ?? []), a.runId]);
            inFlight.push(a.runId);
          }
        };
        for (const op of ops) {
          if (op.kind === 'submit') {
            const pool = POOLS[op.pool]!;
            const u: UnitSubmission = {
              runId: `run-${String(++n).padStart(4, '0')}`,
              tenant: `t${op.tenant}`,
              priority: PRIORITIES[op.lane]!,
              cost: op.cost,
              ...(pool === '' ? {} : { pool }),
            };
            const [r] = s.submit([u], now);
            if (r?.accepted) {
              const key = `${u.tenant}/${op.lane}/${pool}`;
              poolOf.set(u.runId, pool);
              keyOf.set(u.runId, key);
              submitted.set(key, [...(submitted.get(key) ?? []), u.runId]);
            }
          } else if (op.kind === 'throttle') {
            const pool = POOLS[op.pool]!;
            s.observe([throttle(pool, now, op.waitMs)], now);
            const g = pool === '' ? s.status(now).governor : s.status(now).pools?.[pool];
            const until = g?.pausedUntil ? Date.parse(g.pausedUntil) : 0;
            pausedUntil.set(pool, Math.max(pausedUntil.get(pool) ?? 0, until));
          } else if (op.kind === 'release') {
            const runId = op.oldest ? inFlight.shift() : inFlight.pop();
            if (runId) s.release([{ runId, attempt: 0, usedTokens: 1, outcome: 'completed' }], now);
          } else now += op.ms;
          admit();
        }
        for (const [key, order] of admittedOrder) {
          const all = submitted.get(key)!;
          expect(order, key).toEqual(all.slice(0, order.length));
        }
      }),
      { numRuns: 400 },
    );
  });
});

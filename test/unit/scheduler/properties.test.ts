import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../../../src/scheduler';
import { Driver, TENANTS, opArb, startFleet, tenantId } from './harness';
import { Loop, T0, makeFleet, units } from './helpers';

describe('invariants under random workloads', () => {
  it('limits, FIFO, ledger and counts hold after every step', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 120, size: 'max' }), (ops) => {
        const d = new Driver(startFleet());
        const s = d.s;
        /** Submission order per tenant+lane, to check FIFO. */
        const fifo = new Map<string, string[]>();
        for (const op of ops) {
          const before = s.status(d.now);
          const tenantsBefore = new Map(
            Array.from({ length: TENANTS }, (_, i) => [tenantId(i), s.tenantStatus(tenantId(i), d.now)!]),
          );
          const queuedBefore = new Set(d.queued.keys());
          const out = d.apply(op);

          if (op.k === 'submit' || op.k === 'resubmit') {
            for (const [id, q] of d.queued) {
              if (queuedBefore.has(id)) continue;
              const key = `${q.tenant}/${q.lane}`;
              fifo.set(key, [...(fifo.get(key) ?? []), id]);
            }
          }
          if (op.k === 'admit') {
            const adm = out as Admission[];
            if (before.mode !== 'open') expect(adm).toEqual([]);
            const cap = Math.min(before.config.concurrency, before.governor.concurrencyLimit);
            if (adm.length > 0) expect(before.inFlight + adm.length).toBeLessThanOrEqual(cap);
            const perTenant = new Map<string, Admission[]>();
            for (const a of adm) perTenant.set(a.tenant, [...(perTenant.get(a.tenant) ?? []), a]);
            for (const [t, as] of perTenant) {
              const tb = tenantsBefore.get(t)!;
              expect(tb.inFlight + as.length).toBeLessThanOrEqual(tb.settings.maxInFlight);
              if (tb.ledger.remaining !== null) {
                expect(as.reduce((x, a) => x + a.reserved, 0)).toBeLessThanOrEqual(tb.ledger.remaining);
              }
            }
            for (const a of adm) {
              const key = `${a.tenant}/${a.priority}`;
              const line = (fifo.get(key) ?? []).filter((id) => queuedBefore.has(id));
              expect(line[0]).toBe(a.runId);
              fifo.set(key, line.slice(1));
            }
            expect(adm.map((a) => a.seq)).toEqual(adm.map((_, i) => before.counters.admitted + i + 1));
          }

          const st = s.status(d.now);
          expect(st.inFlight).toBe(d.inFlight.size);
          expect(st.queued.total).toBe(d.queued.size);
          expect(
            st.queued.byPriority.interactive + st.queued.byPriority.standard + st.queued.byPriority.batch,
          ).toBe(d.queued.size);
          expect(st.mode).toBe(!d.draining ? 'open' : st.inFlight > 0 ? 'draining' : 'drained');
          for (let i = 0; i < TENANTS; i++) {
            const id = tenantId(i);
            const ts = s.tenantStatus(id, d.now)!;
            const mine = [...d.inFlight.values()].filter((f) => f.tenant === id);
            expect(ts.inFlight).toBe(mine.length);
            expect(ts.ledger.reserved).toBe(d.reservedOf(id));
            const start = Date.parse(ts.ledger.periodStart);
            const spent = d.charges
              .filter((x) => x.tenant === id && x.at >= start)
              .reduce((x, y) => x + y.used, 0);
            expect(ts.ledger.spent).toBe(spent);
            const queued = [...d.queued.values()].filter((q) => q.tenant === id).length;
            expect(st.queued.byTenant[id] ?? 0).toBe(queued);
          }
          for (const id of d.queued.keys()) expect(s.explain(id, d.now)).not.toBeNull();
          const wake = s.nextWakeAt(d.now);
          if (wake !== null) expect(wake).toBeGreaterThanOrEqual(d.now);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('nextWakeAt never sleeps through an admission: nothing is admitted before it that could not be admitted at once', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 1, maxLength: 80, size: 'max' }),
        fc.integer({ min: 1, max: 100_000 }),
        (ops, probe) => {
          const d = new Driver(startFleet());
          for (const op of ops) d.apply(op);
          d.s.admit(d.now);
          const wake = d.s.nextWakeAt(d.now);
          const at = wake === null ? d.now + probe : Math.min(wake - 1, d.now + probe);
          if (at <= d.now) return;
          expect(d.s.admit(at)).toEqual([]);
          expect(d.s.expireLeases(at)).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('fairness properties', () => {
  const workload = fc.record({
    weights: fc.array(fc.constantFrom(1, 2, 3, 4, 0.5), { minLength: 2, maxLength: 5 }),
    seed: fc.integer({ min: 1, max: 1_000_000 }),
    maxCost: fc.integer({ min: 1, max: 400 }),
  });

  /** Tenants all backlogged in one lane with random costs in [1, maxCost]; returns admissions and max cost per tenant. */
  function backlogged(weights: number[], seed: number, maxCost: number) {
    const tenants = Object.fromEntries(weights.map((w, i) => [`t${i}`, { weight: w, maxInFlight: 1000 }]));
    const s = makeFleet({ tenants });
    let x = seed;
    const rnd = () => ((x = (x * 48271) % 2147483647), x / 2147483647);
    const cmax = weights.map(() => 0);
    weights.forEach((_, i) => {
      const us = units(`t${i}`, 400).map((u) => ({ ...u, cost: 1 + Math.floor(rnd() * maxCost) }));
      cmax[i] = Math.max(...us.map((u) => u.cost));
      s.submit(us, T0);
    });
    return { adms: new Loop(s).run(4 * 400 * 0.5), cmax };
  }

  it('keeps normalised token service within the SFQ bound at every point (weights respected)', () => {
    fc.assert(
      fc.property(workload, ({ weights, seed, maxCost }) => {
        const { adms, cmax } = backlogged(weights, seed, maxCost);
        const served = weights.map(() => 0);
        const count = weights.map(() => 0);
        for (const a of adms) {
          const i = Number(a.tenant.slice(1));
          served[i]! += a.reserved;
          count[i]!++;
          if (count.some((c) => c >= 400)) break;
          for (let j = 0; j < weights.length; j++) {
            for (let k = j + 1; k < weights.length; k++) {
              const gap = Math.abs(served[j]! / weights[j]! - served[k]! / weights[k]!);
              expect(gap).toBeLessThanOrEqual(cmax[j]! / weights[j]! + cmax[k]! / weights[k]! + 1e-9);
            }
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('serves every backlogged tenant within a bounded number of admissions', () => {
    fc.assert(
      fc.property(workload, ({ weights, seed, maxCost }) => {
        const { adms } = backlogged(weights, seed, maxCost);
        const n = weights.length;
        const wmax = Math.max(...weights);
        const wmin = Math.min(...weights);
        // Between two services of one tenant each other tenant gets at most (cmax/wmin)/(1/wmax) + 1.
        const bound = (n - 1) * (Math.ceil((maxCost / wmin) * wmax) + 1);
        const last = new Map<string, number>();
        const served = new Map<string, number>();
        for (let i = 0; i < adms.length; i++) {
          const t = adms[i]!.tenant;
          served.set(t, (served.get(t) ?? 0) + 1);
          if ([...served.values()].some((c) => c >= 400)) break;
          for (let j = 0; j < n; j++) expect(i - (last.get(`t${j}`) ?? -1)).toBeLessThanOrEqual(bound + 1);
          last.set(t, i);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('converges to weighted token shares (±5%)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(1, 2, 3, 5), { minLength: 2, maxLength: 4 }), (weights) => {
        const tenants = Object.fromEntries(
          weights.map((w, i) => [`t${i}`, { weight: w, maxInFlight: 1000 }]),
        );
        const s = makeFleet({ tenants });
        weights.forEach((_, i) => s.submit(units(`t${i}`, 3000, 'standard', 50 + 37 * i), T0));
        const tokens = weights.map(() => 0);
        for (const a of new Loop(s).run(2500)) tokens[Number(a.tenant.slice(1))]! += a.reserved;
        const total = tokens.reduce((x, y) => x + y, 0);
        const wsum = weights.reduce((x, y) => x + y, 0);
        weights.forEach((w, i) =>
          expect(Math.abs(tokens[i]! / total - w / wsum)).toBeLessThanOrEqual(0.05 * (w / wsum)),
        );
      }),
      { numRuns: 20 },
    );
  });

  it('holds the lane floors while every lane is backlogged', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 0.05, 0.1, 0.2, 0.33),
        fc.constantFrom(0, 0.01, 0.05, 0.25),
        fc.integer({ min: 50, max: 1500 }),
        (fs, fb, n) => {
          const s = makeFleet({
            settings: { floors: { standard: fs, batch: fb } },
            tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } },
          });
          for (const lane of ['interactive', 'standard', 'batch'] as const)
            s.submit(units('a', 2000, lane), T0);
          const adms = new Loop(s).run(n).slice(0, n);
          const count = (p: string) => adms.filter((a) => a.priority === p).length;
          expect(count('standard')).toBeGreaterThanOrEqual(Math.floor(fs * adms.length) - 1);
          expect(count('batch')).toBeGreaterThanOrEqual(Math.floor(fb * adms.length) - 1);
          expect(count('interactive')).toBeGreaterThanOrEqual(Math.floor((1 - fs - fb) * adms.length) - 2);
        },
      ),
      { numRuns: 80 },
    );
  });
});

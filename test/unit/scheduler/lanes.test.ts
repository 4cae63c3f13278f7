import { describe, expect, it } from 'vitest';
import type { Priority } from '../../../src/scheduler';
import { Loop, T0, churn, makeFleet, units } from './helpers';

const laneCounts = (adms: { priority: Priority }[]) => {
  const m: Record<Priority, number> = { interactive: 0, standard: 0, batch: 0 };
  for (const a of adms) m[a.priority]++;
  return m;
};

describe('priority lanes with floors', () => {
  it('admits an interactive unit at the next free slot behind 5,000 batch units (acceptance: priority)', () => {
    const s = makeFleet({ settings: { concurrency: 20 }, tenants: { bulk: { maxInFlight: 100 }, user: {} } });
    s.submit(units('bulk', 5000, 'batch'), T0);
    const loop = new Loop(s);
    loop.run(300);
    s.submit(units('user', 1, 'interactive'), T0 + 1);
    const next = loop.run(5, T0 + 1);
    const at = next.findIndex((a) => a.priority === 'interactive');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThanOrEqual(2);
  });

  it('interactive goes first even when batch has earned its floor', () => {
    const s = makeFleet({
      settings: { concurrency: 10 },
      tenants: { bulk: { maxInFlight: 100 }, user: { maxInFlight: 100 } },
    });
    s.submit(units('bulk', 5000, 'batch'), T0);
    s.submit(units('user', 5000, 'interactive'), T0);
    const loop = new Loop(s);
    loop.run(1019);
    s.submit(units('user', 1, 'interactive', 100, 90_000), T0);
    // Every admission but the batch floor goes to interactive: at most one batch unit sits between.
    const next = loop.run(3);
    expect(next.filter((a) => a.priority === 'batch').length).toBeLessThanOrEqual(1);
  });

  it('gives backlogged lower lanes at least their floors (10% standard, 5% batch)', () => {
    const s = makeFleet({ tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } } });
    s.submit(units('a', 10_000, 'interactive'), T0);
    s.submit(units('a', 5000, 'standard'), T0);
    s.submit(units('a', 5000, 'batch'), T0);
    const c = laneCounts(churn(s, 4000));
    const n = c.interactive + c.standard + c.batch;
    expect(c.standard).toBeGreaterThanOrEqual(Math.floor(0.1 * n) - 1);
    expect(c.batch).toBeGreaterThanOrEqual(Math.floor(0.05 * n) - 1);
    expect(c.standard / n).toBeLessThan(0.12);
    expect(c.batch / n).toBeLessThan(0.07);
  });

  it('follows floors changed live', () => {
    const s = makeFleet({ tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } } });
    s.patchSettings({ floors: { batch: 0.25 } });
    s.submit(units('a', 10_000, 'interactive'), T0);
    s.submit(units('a', 5000, 'batch'), T0);
    const c = laneCounts(churn(s, 2000));
    expect(c.batch / (c.interactive + c.batch)).toBeCloseTo(0.25, 2);
    expect(s.status(T0).config.floors).toEqual({ standard: 0.1, batch: 0.25 });
  });

  it('serves a lower lane fully when the higher lanes are empty', () => {
    const s = makeFleet({ tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } } });
    s.submit(units('a', 100, 'batch'), T0);
    expect(s.admit(T0).length).toBe(50);
  });

  it('with a zero floor, a lower lane waits for the higher lanes to empty', () => {
    const s = makeFleet({
      settings: { floors: { standard: 0, batch: 0 } },
      tenants: { a: { maxInFlight: 1000, maxQueued: 100_000 } },
    });
    s.submit(units('a', 500, 'interactive'), T0);
    s.submit(units('a', 500, 'batch'), T0);
    const adms = churn(s, 600);
    const firstBatch = adms.findIndex((a) => a.priority === 'batch');
    expect(firstBatch).toBe(500);
  });
});

import { describe, expect, it } from 'vitest';
import { Loop, T0, churn, makeFleet, units } from './helpers';

const tokensByTenant = (adms: { tenant: string; reserved: number }[]) => {
  const m: Record<string, number> = {};
  for (const a of adms) m[a.tenant] = (m[a.tenant] ?? 0) + a.reserved;
  return m;
};

describe('weighted fair queuing inside a lane', () => {
  it('admits a late small tenant before a flooding one gets 100 more admissions (acceptance: flood)', () => {
    const s = makeFleet({ settings: { concurrency: 50 }, tenants: { a: { maxInFlight: 50 }, b: {} } });
    s.submit(units('a', 10_000), T0);
    const loop = new Loop(s);
    const before = loop.run(500);
    expect(before.every((a) => a.tenant === 'a')).toBe(true);
    s.submit(units('b', 10), T0 + 1);
    let aAfter = 0;
    let bDone = 0;
    loop.run(200, T0 + 1, (a) => {
      if (a.tenant === 'b') bDone++;
      else if (bDone < 10) aAfter++;
    });
    expect(bDone).toBe(10);
    expect(aAfter).toBeLessThan(100);
    expect(aAfter).toBeLessThanOrEqual(12);
  });

  it('splits tokens 25/75 between weights 1 and 3 (acceptance: weights)', () => {
    const s = makeFleet({ tenants: { light: { weight: 1 }, heavy: { weight: 3 } } });
    s.submit(units('light', 5000, 'standard', 100), T0);
    s.submit(units('heavy', 5000, 'standard', 100), T0);
    const shares = tokensByTenant(churn(s, 4000));
    const total = (shares.light ?? 0) + (shares.heavy ?? 0);
    expect(Math.abs((shares.light ?? 0) / total - 0.25)).toBeLessThan(0.05 * 0.25);
    expect(Math.abs((shares.heavy ?? 0) / total - 0.75)).toBeLessThan(0.05 * 0.75);
  });

  it('measures shares in tokens, not in units', () => {
    const s = makeFleet({ tenants: { big: {}, small: {} } });
    s.submit(units('big', 1000, 'standard', 1000), T0);
    s.submit(units('small', 5000, 'standard', 100), T0);
    const adms = churn(s, 2000);
    const shares = tokensByTenant(adms);
    expect((shares.big ?? 0) / (shares.small ?? 1)).toBeCloseTo(1, 1);
    const counts =
      adms.filter((a) => a.tenant === 'small').length / adms.filter((a) => a.tenant === 'big').length;
    expect(counts).toBeGreaterThan(8);
  });

  it('keeps FIFO order inside one tenant and lane', () => {
    const s = makeFleet({ tenants: { a: {}, b: {} } });
    s.submit(units('a', 300), T0);
    s.submit(units('b', 300), T0);
    const seen = churn(s, 600)
      .filter((a) => a.tenant === 'a')
      .map((a) => Number(a.runId.split('-').pop()));
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
    expect(seen.length).toBe(300);
  });

  it('gives no extra share for splitting work across many requests', () => {
    const s = makeFleet({ tenants: { split: {}, whole: {} } });
    s.submit(units('whole', 2000), T0);
    for (let i = 0; i < 200; i++) s.submit(units('split', 10, 'standard', 100, i * 10), T0);
    const shares = tokensByTenant(churn(s, 1000));
    expect((shares.split ?? 0) / (shares.whole ?? 1)).toBeCloseTo(1, 1);
  });

  it('does not let an idle tenant bank credit', () => {
    const s = makeFleet({ tenants: { busy: {}, idle: {} } });
    s.submit(units('busy', 3000), T0);
    const loop = new Loop(s);
    loop.run(2000);
    s.submit(units('idle', 500), T0);
    const next = loop.run(200);
    const idleShare = next.filter((a) => a.tenant === 'idle').length / next.length;
    expect(idleShare).toBeGreaterThan(0.4);
    expect(idleShare).toBeLessThan(0.6);
  });
});

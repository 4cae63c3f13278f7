import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetScheduler, defaultTenantSettings } from '../../../src/scheduler';
import type { SchedulerSnapshot } from '../../../src/scheduler';
import { Driver, TENANTS, opArb, startFleet, tenantId } from './harness';
import { T0, makeFleet, openGovernor } from './helpers';

const viaJson = (s: SchedulerSnapshot): SchedulerSnapshot =>
  JSON.parse(JSON.stringify(s)) as SchedulerSnapshot;

/** Everything a caller can observe of a scheduler at `now`. */
function observable(d: Driver) {
  const s = d.s;
  return {
    status: s.status(d.now),
    wake: s.nextWakeAt(d.now),
    explain: [...d.queued.keys()].map((id) => s.explain(id, d.now)),
    tenants: Array.from({ length: TENANTS + 1 }, (_, i) => [
      s.tenantStatus(tenantId(i), d.now),
      s.ledgerEntries(tenantId(i), 500),
    ]),
    known: [...d.queued.keys(), ...d.inFlight.keys()].map((id) => s.isKnown(id)),
  };
}

describe('snapshot and restore', () => {
  it('a restored scheduler behaves identically to the original', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 80, size: 'max' }),
        fc.array(opArb, { minLength: 1, maxLength: 80, size: 'max' }),
        (prefix, suffix) => {
          const a = new Driver(startFleet());
          for (const op of prefix) a.apply(op);
          const snap = a.s.snapshot();
          expect(viaJson(snap)).toEqual(snap);
          const restored = FleetScheduler.restore(viaJson(snap));
          expect(restored.snapshot()).toEqual(snap);
          const b = a.fork(restored);
          expect(observable(b)).toEqual(observable(a));
          for (const op of suffix) {
            expect(b.apply(op)).toEqual(a.apply(op));
            expect(observable(b)).toEqual(observable(a));
          }
          expect(b.s.snapshot()).toEqual(a.s.snapshot());
        },
      ),
      { numRuns: 150 },
    );
  });

  it('continues the admission seq and counters across a restore', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(
      [1, 2, 3].map((i) => ({ runId: `r${i}`, tenant: 'a', priority: 'standard' as const, cost: 10 })),
      T0,
    );
    s.admit(T0, 2);
    const r = FleetScheduler.restore(viaJson(s.snapshot()));
    expect(r.admit(T0)[0]?.seq).toBe(3);
    expect(r.status(T0).counters).toMatchObject({ submitted: 3, admitted: 3 });
  });

  it('fits the continue-as-new payload limit with a full fleet', () => {
    const s = FleetScheduler.create(
      {
        settings: {
          concurrency: 500,
          floors: { standard: 0.1, batch: 0.05 },
          leaseTtlSeconds: 60,
          globalMaxQueued: 20_000,
        },
        governor: openGovernor(),
      },
      T0,
    );
    const uuid = (i: number) =>
      `${(i * 2654435761).toString(16).padStart(8, '0')}-7d2c-4f3a-9b1e-${i.toString(16).padStart(12, '0')}`;
    for (let t = 0; t < 1000; t++)
      s.upsertTenant(`tenant-${t}`, defaultTenantSettings({ budget: { tokens: 1e9, period: 'day' } }), T0);
    const submit = (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const tenant = `tenant-${i % 1000}`;
        s.submit([{ runId: `run-${tenant}-${uuid(i)}`, tenant, priority: 'batch', cost: 12_345 }], T0);
      }
    };
    submit(0, 20_000);
    expect(s.admit(T0).length).toBe(500);
    submit(20_000, 21_000);
    const bytes = JSON.stringify(s.snapshot()).length;
    expect(s.status(T0)).toMatchObject({ inFlight: 500, queued: { total: 20_000 } });
    expect(s.ledgerEntries('tenant-1', 10).length).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(2 * 1024 * 1024 * 0.9);
  });
});

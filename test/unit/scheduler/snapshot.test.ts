import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import type { SchedulerSnapshot } from '../../../src/scheduler';
import { Driver, TENANTS, opArb, startFleet, tenantId } from './harness';
import { T0, makeFleet } from './helpers';

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
});

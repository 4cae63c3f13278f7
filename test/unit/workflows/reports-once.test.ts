import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reportsOnce } from '../../../src/workflows/scheduler-support';
import type { WorkerReport } from '../../../src/contract/scheduler-messages';

/**
 * A report may reach one scheduler run more than once: an update sent again after its answer was
 * lost, and the same report as a signal from a worker that began to stop while its update was on its
 * way. Each id is applied once; reports without an id (older workers) every time.
 */
describe('reportsOnce', () => {
  it('applies each report id once, whatever the interleaving of repeats', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (ids) => {
        const applied: string[] = [];
        const on = reportsOnce((r) => applied.push(r.id!));
        for (const n of ids) on({ id: `report-abcd1234-${n}`, charges: [] });
        expect(applied).toEqual([...new Set(ids)].map((n) => `report-abcd1234-${n}`));
      }),
    );
  });

  it('applies reports without an id, or with a malformed one, every time', () => {
    let applied = 0;
    const on = reportsOnce(() => applied++);
    on({ charges: [] });
    on({ charges: [] });
    on({ id: 7 } as unknown as WorkerReport);
    on({ id: 7 } as unknown as WorkerReport);
    on(null as unknown as WorkerReport);
    expect(applied).toBe(5);
  });
});

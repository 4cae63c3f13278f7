import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

describe('lifetime counters for the console', () => {
  it('count admissions by lane and the model calls and throttles the workers report', () => {
    const s = makeFleet({ settings: { concurrency: 100 }, tenants: { a: {}, b: {} } });
    s.submit([...units('a', 3, 'interactive'), ...units('b', 5, 'standard'), ...units('a', 2, 'batch')], T0);
    const admitted = s.admit(T0);
    expect(admitted).toHaveLength(10);
    s.observe(
      [
        { at: T0, calls: 7, throttled: 2, maxRetryAfterMs: 1000, tokens: 700 },
        { at: T0 + 100, calls: 3, throttled: 0, maxRetryAfterMs: 0, tokens: 300 },
      ],
      T0 + 100,
    );
    const c = s.status(T0 + 100).counters;
    expect(c.admittedByPriority).toEqual({ interactive: 3, standard: 5, batch: 2 });
    expect(c.admitted).toBe(10);
    expect(c.modelCalls).toBe(10);
    expect(c.throttled).toBe(2);
    // The status is a copy: changing it does not change the scheduler.
    c.admittedByPriority.batch = 99;
    expect(s.status(T0 + 100).counters.admittedByPriority.batch).toBe(2);
  });

  it('survive continue-as-new, and start at 0 from a snapshot taken before they existed', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 4, 'interactive'), T0);
    s.admit(T0);
    const snap = JSON.parse(JSON.stringify(s.snapshot()));
    expect(FleetScheduler.restore(snap).status(T0).counters).toEqual(s.status(T0).counters);

    for (const k of ['admittedByPriority', 'modelCalls', 'throttled']) delete snap.counters[k];
    const legacy = FleetScheduler.restore(snap);
    expect(legacy.status(T0).counters).toMatchObject({
      admitted: 4,
      admittedByPriority: { interactive: 0, standard: 0, batch: 0 },
      modelCalls: 0,
      throttled: 0,
    });
    legacy.submit(units('a', 1, 'batch', 100, 10), T0);
    legacy.admit(T0);
    expect(legacy.status(T0).counters.admittedByPriority.batch).toBe(1);
  });
});

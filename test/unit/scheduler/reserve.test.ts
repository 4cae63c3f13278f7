import { describe, expect, it } from 'vitest';
import { FleetScheduler } from '../../../src/scheduler';
import { Loop, T0, fleetSettings, makeFleet, openGovernor, units } from './helpers';

const fleet = (concurrency: number, interactiveReserve?: number) =>
  makeFleet({
    settings: { concurrency, ...(interactiveReserve !== undefined ? { interactiveReserve } : {}) },
    tenants: { bulk: { maxInFlight: 10_000, maxQueued: 100_000 }, user: { maxInFlight: 100 } },
  });

describe('interactive reserve', () => {
  it('keeps the last slots free of batch and standard work, and admits an interactive arrival into them at once', () => {
    const s = fleet(10, 0.05);
    s.submit(units('bulk', 500, 'batch'), T0);
    s.submit(units('bulk', 500, 'standard'), T0);
    const first = s.admit(T0);
    expect(first).toHaveLength(9);
    expect(s.status(T0).inFlight).toBe(9);
    expect(s.status(T0).config).toMatchObject({ interactiveReserve: 0.05, reservedSlots: 1 });
    // No slot freed: the interactive unit takes the reserved one.
    s.submit(units('user', 1, 'interactive'), T0 + 1);
    const next = s.admit(T0 + 1);
    expect(next.map((a) => a.priority)).toEqual(['interactive']);
    expect(s.status(T0 + 1).inFlight).toBe(10);
  });

  it('holds back a lower lane even when it is owed its floor', () => {
    const s = fleet(10, 0.05);
    s.submit(units('bulk', 500, 'batch'), T0);
    s.submit(units('user', 50, 'interactive'), T0);
    const loop = new Loop(s);
    loop.run(200);
    // With interactive work waiting, the fleet is full; batch never holds more than 9 slots.
    let maxBatch = 0;
    loop.run(300, T0, () => {
      maxBatch = Math.max(maxBatch, loop.inFlight.filter((a) => a.priority === 'batch').length);
    });
    expect(maxBatch).toBeLessThanOrEqual(9);
    expect(s.status(T0).counters.admittedByPriority.batch).toBeGreaterThan(0);
  });

  it('rounds the reserve up, never reserves every slot, and keeps none when set to 0 or absent', () => {
    const cases: [number, number | undefined, number][] = [
      [1, 0.05, 0],
      [2, 0.5, 1],
      [10, 0.05, 1],
      [20, 0.05, 1],
      [21, 0.05, 2],
      [100, 0.05, 5],
      [100, 0, 0],
      [100, undefined, 0],
    ];
    for (const [concurrency, reserve, slots] of cases) {
      const s = fleet(concurrency, reserve);
      s.submit(units('bulk', 300, 'batch'), T0);
      expect(s.admit(T0), `${concurrency} × ${reserve}`).toHaveLength(concurrency - slots);
      expect(s.status(T0).config.reservedSlots).toBe(slots);
    }
  });

  it('applies to the cap in force when the governor lowers it', () => {
    const s = makeFleet({
      settings: { concurrency: 100, interactiveReserve: 0.1 },
      governor: { maxConcurrency: 20 },
      tenants: { bulk: { maxInFlight: 10_000, maxQueued: 100_000 } },
    });
    s.submit(units('bulk', 300, 'batch'), T0);
    expect(s.admit(T0)).toHaveLength(18);
  });

  it('does not wake the scheduler for a lower lane that only the reserve holds back', () => {
    const s = fleet(10, 0.05);
    s.submit(units('bulk', 50, 'batch'), T0);
    s.admit(T0);
    // No lease expires before the TTL: nothing can change before then.
    expect(s.nextWakeAt(T0)).toBe(T0 + 60_000);
  });

  it('explains a batch unit held back by the reserve', () => {
    const s = fleet(10, 0.05);
    s.submit(units('bulk', 20, 'batch'), T0);
    s.admit(T0);
    const why = s.explain('bulk-batch-15', T0);
    expect(why?.code).toBe('priority');
    expect(why?.message).toContain('1 of 10 slots are kept free for interactive work');
  });

  it('is patched live, clamped, survives a snapshot, and stays absent in schedulers begun without it', () => {
    const s = fleet(10);
    expect(s.status(T0).config.interactiveReserve).toBe(0);
    expect(s.snapshot().settings.interactiveReserve).toBeUndefined();
    s.patchSettings({ concurrency: 20 });
    expect(s.snapshot().settings.interactiveReserve).toBeUndefined();
    s.patchSettings({ interactiveReserve: 0.2 });
    expect(s.status(T0).config).toMatchObject({ interactiveReserve: 0.2, reservedSlots: 4 });
    s.patchSettings({ interactiveReserve: 7 });
    expect(s.status(T0).config.interactiveReserve).toBe(1);
    expect(s.status(T0).config.reservedSlots).toBe(19);
    s.patchSettings({ interactiveReserve: 0.1 });
    const restored = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(restored.status(T0).config).toMatchObject({ interactiveReserve: 0.1, reservedSlots: 2 });
    const fresh = FleetScheduler.create(
      { settings: fleetSettings({ interactiveReserve: 0.05 }), governor: openGovernor() },
      T0,
    );
    expect(fresh.status(T0).config.interactiveReserve).toBe(0.05);
  });
});

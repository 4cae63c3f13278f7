import { describe, expect, it } from 'vitest';
import { decodeCompact } from '../../../src/scheduler/snapshot-compact';
import { FleetScheduler } from '../../../src/scheduler';
import { MAX_ENDED_RUNS } from '../../../src/scheduler/ended';
import { T0, makeFleet, units } from './helpers';

const release = (runId: string, attempt: number, usedTokens: number, outcome = 'completed' as const) => ({
  runId,
  attempt,
  usedTokens,
  outcome,
  tenant: 'a',
});

describe('run lifecycle in the core', () => {
  it('a finished run is never admitted again: a repeated submission is a harmless duplicate', () => {
    const s = makeFleet({ tenants: { a: {} } });
    const [u] = units('a', 1);
    s.submit([u!], T0);
    const [adm] = s.admit(T0);
    s.release([release(adm!.runId, 0, 80)], T0 + 1);
    expect(s.submit([u!], T0 + 2)).toEqual([
      { runId: u!.runId, accepted: true, duplicate: true, held: false },
    ]);
    expect(s.admit(T0 + 3)).toEqual([]);
    expect(s.status(T0 + 3).queued.total).toBe(0);
    // It survives continue-as-new.
    const r = FleetScheduler.restore(JSON.parse(JSON.stringify(s.snapshot())));
    expect(r.submit([u!], T0 + 4)[0]).toMatchObject({ accepted: true, duplicate: true });
    expect(r.admit(T0 + 5)).toEqual([]);
    // A re-drive (a new execution of a failed run, past its attempts) is queued again.
    expect(r.submit([{ ...u!, redrive: true, attempt: 1 }], T0 + 6)[0]).toMatchObject({
      accepted: true,
      duplicate: false,
    });
  });

  it("a re-driven run's new execution continues past the failed one's attempts: a late release of the failed one ends nothing", () => {
    const s = makeFleet({ tenants: { a: {} } });
    const [u] = units('a', 1);
    s.submit([u!], T0);
    s.admit(T0);
    s.release([release(u!.runId, 0, 40, 'failed' as 'completed')], T0 + 1);
    // The new execution starts at the attempt after the failed one's last (the fleet reads it there).
    expect(s.submit([{ ...u!, redrive: true, attempt: 1 }], T0 + 2)[0]).toMatchObject({
      accepted: true,
      duplicate: false,
    });
    const [adm] = s.admit(T0 + 3);
    expect(adm).toMatchObject({ runId: u!.runId, attempt: 1 });
    // The failed execution's release, repeated late (its last workflow task ran again): stale.
    s.release([release(u!.runId, 0, 40, 'failed' as 'completed')], T0 + 4);
    expect(s.status(T0 + 4).inFlight).toBe(1);
    s.release([release(u!.runId, 1, 30)], T0 + 5);
    expect(s.status(T0 + 5)).toMatchObject({ inFlight: 0, counters: { completed: 1, failed: 1 } });
    // A repeat of the re-drive after the new execution ended finds it ended: never queued again.
    expect(s.submit([{ ...u!, redrive: true, attempt: 1 }], T0 + 6)[0]).toMatchObject({ duplicate: true });
    expect(s.status(T0 + 6).queued.total).toBe(0);
  });

  it('remembers at most MAX_ENDED_RUNS runs, oldest forgotten first', () => {
    const s = makeFleet({ settings: { concurrency: 5000 }, tenants: { a: { maxInFlight: 5000 } } });
    const us = units('a', MAX_ENDED_RUNS + 10, 'standard', 1);
    s.submit(us, T0);
    const adm = s.admit(T0);
    s.release(
      adm.map((a) => release(a.runId, 0, 1)),
      T0,
    );
    expect(decodeCompact(s.snapshot()).ended).toHaveLength(MAX_ENDED_RUNS);
    expect(s.submit([us[0]!], T0)[0]).toMatchObject({ duplicate: false }); // forgotten
    expect(s.submit([us.at(-1)!], T0)[0]).toMatchObject({ duplicate: true });
  });

  it('a gate gives the slot back with its own outcome and the run queues again', () => {
    const s = makeFleet({ tenants: { a: {} } });
    const [u] = units('a', 1);
    s.submit([u!], T0);
    s.admit(T0);
    s.release([{ ...release(u!.runId, 0, 40), outcome: 'gated' }], T0);
    const st = s.status(T0);
    expect(st.counters.gated).toBe(1);
    expect(st.counters.completed).toBe(0);
    expect(s.submit([{ ...u!, attempt: 1 }], T0)[0]).toMatchObject({ accepted: true, duplicate: false });
    const [again] = s.admit(T0);
    expect(again).toMatchObject({ runId: u!.runId, attempt: 1 });
    s.release([release(u!.runId, 1, 60)], T0);
    expect(s.status(T0).counters.completed).toBe(1);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(100);
  });

  it('a release the core holds no lease for (lost chain) charges its tenant once', () => {
    const s = makeFleet({ tenants: { a: { budget: { tokens: 1000, period: 'day' } } } });
    s.beginRecovery(T0); // a lost chain's successor recovers
    s.release([release('r1', 0, 70)], T0);
    s.release([release('r1', 0, 70)], T0); // repeated
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(70);
    expect(s.status(T0).counters.completed).toBe(1);
    expect(s.submit([{ runId: 'r1', tenant: 'a', priority: 'standard', cost: 10 }], T0)[0]).toMatchObject({
      duplicate: true,
    });
  });

  it('an expired attempt: a late renewal does not revive it, its late release charges only the rest', () => {
    const s = makeFleet({ settings: { leaseTtlSeconds: 10 }, tenants: { a: {} } });
    const [u] = units('a', 1);
    s.submit([u!], T0);
    s.admit(T0);
    s.renew([{ runId: u!.runId, attempt: 0, usedTokens: 30 }], T0 + 1000);
    expect(s.expireLeases(T0 + 60_000)).toHaveLength(1);
    expect(s.tenantStatus('a', T0 + 60_000)!.ledger.spent).toBe(30);
    s.renew([{ runId: u!.runId, attempt: 0, usedTokens: 50, tenant: 'a', cost: 100 }], T0 + 60_001);
    expect(s.status(T0 + 60_001).inFlight).toBe(0);
    // A stale resubmission of the expired attempt is a duplicate; the next attempt would queue.
    expect(s.submit([{ ...u!, attempt: 0 }], T0 + 60_001)[0]).toMatchObject({ duplicate: true });
    // The attempt finished after all (its lease had expired): only what exceeds the expiry's charge.
    s.release([release(u!.runId, 0, 50)], T0 + 60_002);
    expect(s.tenantStatus('a', T0 + 60_002)!.ledger.spent).toBe(50);
    s.release([release(u!.runId, 0, 50)], T0 + 60_003);
    expect(s.tenantStatus('a', T0 + 60_003)!.ledger.spent).toBe(50);
  });

  it('a running run the core lost comes back under a lease with its next renewal', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.beginRecovery(T0); // a lost chain's successor recovers
    s.renew(
      [{ runId: 'r9', attempt: 2, usedTokens: 40, tenant: 'a', priority: 'interactive', cost: 100 }],
      T0,
    );
    const st = s.status(T0);
    expect(st.inFlight).toBe(1);
    expect(st.counters.adopted).toBe(1);
    expect(s.tenantStatus('a', T0)!.ledger.reserved).toBe(100);
    s.release([release('r9', 2, 90)], T0 + 1);
    expect(s.status(T0 + 1).inFlight).toBe(0);
    expect(s.tenantStatus('a', T0 + 1)!.ledger).toMatchObject({ reserved: 0, spent: 90 });
    // Unknown tenants are not adopted (the API re-sends tenants first).
    s.renew([{ runId: 'x', attempt: 0, usedTokens: 1, tenant: 'nobody' }], T0 + 2);
    expect(s.status(T0 + 2).inFlight).toBe(0);
  });

  it('recovered usage floors spent, never adds to it', () => {
    const s = makeFleet({ tenants: { a: { budget: { tokens: 1000, period: 'day' } } } });
    s.beginRecovery(T0);
    s.release([release('r1', 0, 100)], T0);
    const [w] = s.recoveryWindows(T0);
    s.floorSpent([{ ...w!, tokens: 60 }], T0);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(100);
    s.floorSpent([{ ...w!, tokens: 400 }], T0);
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(400);
    s.floorSpent([{ ...w!, periodStart: 0, tokens: 900 }], T0); // another period: ignored
    expect(s.tenantStatus('a', T0)!.ledger.spent).toBe(400);
  });

  it('a tenant without a budget period is floored at all its runs, not at those since the chain made its ledger', () => {
    // After a loss the new chain creates the ledger at the recovery: a floor counted from there would
    // miss every run that finished before.
    const s = makeFleet({ tenants: { free: {}, capped: { budget: { tokens: 1000, period: 'day' } } } });
    const windows = s.recoveryWindows(T0);
    expect(windows.find((w) => w.tenant === 'free')!.periodStart).toBe(0);
    const capped = windows.find((w) => w.tenant === 'capped')!;
    expect(capped.periodStart).toBeGreaterThan(0);
    s.floorSpent(
      [
        { tenant: 'free', periodStart: 0, tokens: 2000 },
        { tenant: 'capped', periodStart: 0, tokens: 900 }, // a period that ends: 0 is not its window
      ],
      T0,
    );
    expect(s.tenantStatus('free', T0)!.ledger.spent).toBe(2000);
    expect(s.tenantStatus('capped', T0)!.ledger.spent).toBe(0);
  });

  it('unknown_tenant asks for a retry after a floor, never 0 (a waiting run must not spin)', () => {
    const s = makeFleet();
    const [r] = s.submit(units('ghost', 1), T0);
    expect(r).toMatchObject({ accepted: false, code: 'unknown_tenant' });
    expect(r!.accepted === false && r!.retryAfterSeconds).toBeGreaterThanOrEqual(5);
  });
});

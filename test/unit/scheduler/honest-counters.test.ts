import { describe, expect, it } from 'vitest';
import { MAX_ENDED_RUNS } from '../../../src/scheduler/ended';
import type { FleetScheduler, Release, Renewal } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const release = (runId: string, attempt: number, usedTokens: number): Release => ({
  runId,
  attempt,
  usedTokens,
  outcome: 'completed',
  tenant: 'a',
});
const renewal = (runId: string, attempt: number, usedTokens: number): Renewal => ({
  runId,
  attempt,
  usedTokens,
  tenant: 'a',
  priority: 'standard',
  cost: 100,
});

const fleet = () =>
  makeFleet({
    settings: { concurrency: 5000 },
    tenants: { a: { maxInFlight: 5000, maxQueued: 5000 } },
  });

/** `n` other runs admitted and finished at `at`: the core's memory of ended runs moves on. */
function othersEnd(s: FleetScheduler, n: number, at: number, from = 1000) {
  s.submit(units('a', n, 'standard', 1, from), at);
  const adm = s.admit(at);
  expect(adm).toHaveLength(n);
  s.release(
    adm.map((a) => release(a.runId, a.attempt, 1)),
    at,
  );
}

/**
 * A run's last workflow task that did not complete runs its local activities again (the step's model
 * call, its renewal, the release); that may come after MAX_ENDED_RUNS other runs ended, when the core
 * has forgotten the run.
 */
describe('each run counted once although its last messages come back after the core forgot it', () => {
  const flood = () => {
    const s = fleet();
    const [u] = units('a', 1);
    s.submit([u!], T0);
    const [adm] = s.admit(T0);
    s.renew([renewal(adm!.runId, 0, 60)], T0 + 1);
    s.release([release(adm!.runId, 0, 60)], T0 + 2);
    othersEnd(s, MAX_ENDED_RUNS, T0 + 3);
    // The run's last workflow task again: its step renews, then it releases.
    s.renew([renewal(adm!.runId, 0, 60)], T0 + 100_000);
    const adopted = s.status(T0 + 100_000).counters.adopted;
    s.release([release(adm!.runId, 0, 60)], T0 + 100_001);
    return { s, adopted, runId: adm!.runId };
  };

  it('the renewal is not adopted, the release counts nothing and charges nothing', () => {
    const { s, adopted, runId } = flood();
    expect(adopted).toBe(0);
    const st = s.status(T0 + 100_001);
    expect(st.counters).toMatchObject({ completed: MAX_ENDED_RUNS + 1, adopted: 0, expired: 0 });
    expect(st.inFlight).toBe(0);
    expect(s.explain(runId, T0 + 100_001)).toBeNull();
    expect(s.tenantStatus('a', T0 + 100_001)!.ledger.spent).toBe(60 + MAX_ENDED_RUNS);
  });

  it('so does a release whose renewal did not come first (the mailbox drops a run’s renewal at its release)', () => {
    const s = fleet();
    const [u] = units('a', 1);
    s.submit([u!], T0);
    const [adm] = s.admit(T0);
    s.release([release(adm!.runId, 0, 60)], T0 + 2);
    othersEnd(s, MAX_ENDED_RUNS, T0 + 3);
    s.release([release(adm!.runId, 0, 60)], T0 + 100_000);
    expect(s.status(T0 + 100_000).counters.completed).toBe(MAX_ENDED_RUNS + 1);
  });

  it('while the chain recovers (it may have lost leases), a running run it does not know is adopted and counted', () => {
    const s = fleet();
    s.beginRecovery(T0);
    s.renew([renewal('r-lost', 2, 30)], T0);
    expect(s.status(T0)).toMatchObject({ inFlight: 1, counters: { adopted: 1 } });
    s.release([release('r-lost', 2, 50)], T0 + 1);
    s.release([release('r-lost', 2, 50)], T0 + 2); // repeated
    expect(s.status(T0 + 2)).toMatchObject({ inFlight: 0, counters: { completed: 1, adopted: 1 } });
    // And a release of a run it never saw running.
    s.release([release('r-lost-2', 0, 10)], T0 + 3);
    expect(s.status(T0 + 3).counters.completed).toBe(2);
  });
});

describe('a run that finishes on the attempt whose lease expired', () => {
  it('is counted once (the revoke came after its last step began)', () => {
    const s = fleet();
    const [u] = units('a', 1);
    s.submit([u!], T0);
    const [adm] = s.admit(T0);
    s.renew([renewal(adm!.runId, 0, 40)], T0 + 1);
    expect(s.expireLeases(T0 + 3_600_000)).toHaveLength(1);
    s.release([release(adm!.runId, 0, 70)], T0 + 3_600_001);
    s.release([release(adm!.runId, 0, 70)], T0 + 3_600_002); // repeated
    const st = s.status(T0 + 3_600_002);
    expect(st.counters).toMatchObject({ completed: 1, expired: 1, admitted: 1 });
    // Charged what the expiry charged (40) and the rest its release reported (30), once.
    expect(s.tenantStatus('a', T0 + 3_600_002)!.ledger.spent).toBe(70);
  });

  it('its expired attempt outlives finished runs in the memory: a late renewal is not adopted, the release counts', () => {
    const s = fleet();
    const [u] = units('a', 1);
    s.submit([u!], T0);
    const [adm] = s.admit(T0);
    s.renew([renewal(adm!.runId, 0, 40)], T0 + 1);
    s.expireLeases(T0 + 3_600_000);
    othersEnd(s, MAX_ENDED_RUNS, T0 + 3_600_001);
    othersEnd(s, MAX_ENDED_RUNS, T0 + 3_600_001, 5000);
    s.renew([renewal(adm!.runId, 0, 50)], T0 + 3_600_002);
    s.release([release(adm!.runId, 0, 70)], T0 + 3_600_003);
    const st = s.status(T0 + 3_600_003);
    expect(st.counters).toMatchObject({ completed: 2 * MAX_ENDED_RUNS + 1, adopted: 0, expired: 1 });
    expect(s.tenantStatus('a', T0 + 3_600_003)!.ledger.spent).toBe(70 + 2 * MAX_ENDED_RUNS);
  });

  it('a gated release of an expired attempt counts as gated, not completed, and once', () => {
    const s = fleet();
    const [u] = units('a', 1);
    s.submit([u!], T0);
    s.admit(T0);
    s.expireLeases(T0 + 3_600_000);
    const gated: Release = { ...release(u!.runId, 0, 10), outcome: 'gated' };
    s.release([gated], T0 + 3_600_001);
    s.release([gated], T0 + 3_600_002);
    expect(s.status(T0 + 3_600_002).counters).toMatchObject({ completed: 0, gated: 0, expired: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { T0, makeFleet, units } from './helpers';

describe('leases', () => {
  it('grants leaseTtlSeconds, extends on renewal, returns the slot on expiry', () => {
    const s = makeFleet({ settings: { concurrency: 1, leaseTtlSeconds: 30 }, tenants: { a: {} } });
    s.submit(units('a', 2), T0);
    const [a] = s.admit(T0);
    expect(a?.leaseExpiresAt).toBe(T0 + 30_000);
    expect(s.nextWakeAt(T0)).toBe(T0 + 30_000);
    s.renew([{ runId: a!.runId, attempt: 0, usedTokens: 5 }], T0 + 20_000);
    s.renew(
      [
        { runId: a!.runId, attempt: 7, usedTokens: 5 },
        { runId: 'unknown', attempt: 0, usedTokens: 1 },
      ],
      T0 + 25_000,
    );
    expect(s.nextWakeAt(T0 + 20_000)).toBe(T0 + 50_000);
    expect(s.expireLeases(T0 + 49_999)).toEqual([]);
    const [gone] = s.expireLeases(T0 + 50_000);
    expect(gone).toMatchObject({ runId: a!.runId, seq: 1, leaseExpiresAt: T0 + 50_000 });
    expect(s.status(T0 + 50_000).counters.expired).toBe(1);
    expect(s.isKnown(a!.runId)).toBe(false);
    expect(s.admit(T0 + 50_000).length).toBe(1);
  });

  it('renewal never shortens a lease after the TTL was lowered', () => {
    const s = makeFleet({ settings: { leaseTtlSeconds: 60 }, tenants: { a: {} } });
    s.submit(units('a', 1), T0);
    const [a] = s.admit(T0);
    s.patchSettings({ leaseTtlSeconds: 5 });
    s.renew([{ runId: a!.runId, attempt: 0, usedTokens: 0 }], T0 + 1000);
    expect(s.nextWakeAt(T0 + 1000)).toBe(T0 + 60_000);
  });

  it('release is idempotent and ignores stale attempts', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 1), T0);
    const [a] = s.admit(T0);
    s.release([{ runId: a!.runId, attempt: 1, usedTokens: 5, outcome: 'completed' }], T0);
    expect(s.status(T0).inFlight).toBe(1);
    s.release([{ runId: a!.runId, attempt: 0, usedTokens: 5, outcome: 'completed' }], T0);
    s.release([{ runId: a!.runId, attempt: 0, usedTokens: 5, outcome: 'completed' }], T0);
    expect(s.status(T0)).toMatchObject({ inFlight: 0, counters: { completed: 1, admitted: 1 } });
  });

  it('expires many leases earliest first in one call', () => {
    const s = makeFleet({ settings: { leaseTtlSeconds: 10 }, tenants: { a: {} } });
    s.submit(units('a', 3), T0);
    s.admit(T0, 1);
    s.admit(T0 + 2000, 1);
    s.admit(T0 + 1000, 1);
    expect(s.expireLeases(T0 + 60_000).map((a) => a.seq)).toEqual([1, 3, 2]);
  });
});

describe('nextWakeAt', () => {
  it('is null when nothing can change without a message', () => {
    const s = makeFleet({ tenants: { a: {} } });
    expect(s.nextWakeAt(T0)).toBeNull();
  });

  it('is now when admissible work is waiting', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 1), T0);
    expect(s.nextWakeAt(T0 + 5)).toBe(T0 + 5);
  });

  it('does not wake for a full fleet until a lease could expire', () => {
    const s = makeFleet({ settings: { concurrency: 1, leaseTtlSeconds: 100 }, tenants: { a: {} } });
    s.submit(units('a', 5), T0);
    s.admit(T0);
    expect(s.nextWakeAt(T0 + 1)).toBe(T0 + 100_000);
  });
});

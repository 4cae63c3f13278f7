import { describe, expect, it } from 'vitest';
import { LEDGER_RING_PER_TENANT, LEDGER_RING_TOTAL } from '../../../src/scheduler';
import { periodEndOf, periodStartOf } from '../../../src/scheduler/periods';
import { T0, makeFleet, units } from './helpers';
import { LINGER_LEASE_TTLS } from '../../../src/scheduler/lingers';

const HOUR = 3_600_000;

describe('budget ledger', () => {
  it('reserves on admission and settles actual usage on completion', () => {
    const s = makeFleet({ tenants: { a: { budget: { tokens: 1000, period: 'day' } } } });
    s.submit(units('a', 2, 'standard', 300), T0);
    const adm = s.admit(T0);
    expect(adm.map((a) => a.reserved)).toEqual([300, 300]);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 600, spent: 0, remaining: 400 });
    s.release([{ runId: adm[0]!.runId, attempt: 0, usedTokens: 250, outcome: 'completed' }], T0);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 300, spent: 250, remaining: 450 });
    expect(s.ledgerEntries('a', 10).map((e) => [e.kind, e.tokens])).toEqual([
      ['settle', 250],
      ['reserve', 300],
      ['reserve', 300],
    ]);
  });

  it('withholds a unit the remaining budget cannot cover and waits after an overrun', () => {
    const s = makeFleet({ tenants: { a: { maxInFlight: 1, budget: { tokens: 1000, period: 'hour' } } } });
    s.submit(units('a', 2, 'standard', 400), T0);
    const [first] = s.admit(T0);
    expect(s.explain('a-standard-1', T0)?.code).toBe('tenant_in_flight_cap');
    s.release([{ runId: first!.runId, attempt: 0, usedTokens: 900, outcome: 'completed' }], T0);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 0, spent: 900, remaining: 100 });
    expect(s.admit(T0)).toEqual([]);
    expect(s.explain('a-standard-1', T0)?.code).toBe('budget');
    const end = periodEndOf('hour', periodStartOf('hour', T0)) as number;
    expect(s.nextWakeAt(T0)).toBe(end);
    expect(s.admit(end - 1)).toEqual([]);
    expect(s.admit(end).map((a) => a.runId)).toEqual(['a-standard-1']);
    expect(s.tenantStatus('a', end)?.ledger).toMatchObject({
      spent: 0,
      reserved: 400,
      periodStart: new Date(end).toISOString(),
    });
    expect(s.ledgerEntries('a', 2).map((e) => [e.kind, e.tokens])).toEqual([
      ['reserve', 400],
      ['rollover', 900],
    ]);
  });

  it('lets remaining go negative after an overrun, and the tenant waits', () => {
    const s = makeFleet({ tenants: { a: { budget: { tokens: 1000, period: 'day' } } } });
    s.submit(units('a', 2, 'standard', 400), T0);
    const adm = s.admit(T0);
    s.release([{ runId: adm[0]!.runId, attempt: 0, usedTokens: 1500, outcome: 'completed' }], T0);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 400, spent: 1500, remaining: -900 });
    expect(s.submit(units('a', 1, 'standard', 1, 9), T0)[0]).toMatchObject({
      accepted: false,
      code: 'budget_exhausted',
    });
  });

  it('charges what failed and cancelled units used and releases the rest', () => {
    const s = makeFleet({ tenants: { a: { budget: { tokens: 10_000, period: 'none' } } } });
    s.submit(units('a', 2, 'standard', 1000), T0);
    const [x, y] = s.admit(T0);
    s.release([{ runId: x!.runId, attempt: 0, usedTokens: 100, outcome: 'failed' }], T0);
    s.release([{ runId: y!.runId, attempt: 0, usedTokens: 200, outcome: 'cancelled' }], T0);
    s.release([{ runId: y!.runId, attempt: 0, usedTokens: 200, outcome: 'cancelled' }], T0);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 0, spent: 300, remaining: 9700 });
    expect(s.status(T0).counters).toMatchObject({ failed: 1, cancelled: 1, completed: 0 });
  });

  it('charges an expired lease the usage known from its renewals', () => {
    const s = makeFleet({
      settings: { leaseTtlSeconds: 10 },
      tenants: { a: { budget: { tokens: 10_000, period: 'none' } } },
    });
    s.submit(units('a', 1, 'standard', 1000), T0);
    const [a] = s.admit(T0);
    s.renew([{ runId: a!.runId, attempt: 0, usedTokens: 350 }], T0 + 5000);
    expect(s.expireLeases(T0 + 14_999)).toEqual([]);
    const expired = s.expireLeases(T0 + 15_000);
    expect(expired.map((e) => e.runId)).toEqual([a!.runId]);
    // The rest of the reservation lingers for the attempt's calls that may still be under way...
    expect(s.tenantStatus('a', T0 + 15_000)?.ledger).toMatchObject({ reserved: 650, spent: 350 });
    expect(s.ledgerEntries('a', 1)[0]).toMatchObject({ kind: 'expire', tokens: 350 });
    // ...until LINGER_LEASE_TTLS lease TTLs after the expiry, which the wake-up names.
    const end = T0 + 15_000 + LINGER_LEASE_TTLS * 10_000;
    expect(s.nextWakeAt(T0 + 15_000)).toBe(end);
    // A retry (which the door lets past the budget) waits for the linger to end.
    const retry = { ...units('a', 1, 'standard', 9500, 1)[0]!, attempt: 1 };
    expect(s.submit([retry], T0 + 15_000)[0]).toMatchObject({ accepted: true });
    expect(s.admit(T0 + 15_000)).toEqual([]);
    expect(s.nextWakeAt(T0 + 15_000)).toBe(end);
    s.expireLeases(end - 1);
    expect(s.tenantStatus('a', end - 1)?.ledger.reserved).toBe(650);
    s.expireLeases(end);
    expect(s.tenantStatus('a', end)?.ledger).toMatchObject({ reserved: 0, spent: 350 });
    expect(s.admit(end).map((x) => x.reserved)).toEqual([9500]);
  });

  it('a charge of an expired attempt consumes the linger: spent + reserved never passes the budget', () => {
    const s = makeFleet({
      settings: { leaseTtlSeconds: 10 },
      tenants: { a: { budget: { tokens: 1000, period: 'none' } } },
    });
    s.submit(units('a', 1, 'standard', 600), T0);
    const [a] = s.admit(T0);
    s.charge([{ tenant: 'a', runId: a!.runId, attempt: 0, tokens: 100 }], T0 + 1000);
    s.expireLeases(T0 + 10_000);
    // The attempt's second call (reserved, worst case 500) is under way; another run takes the rest.
    expect(s.tenantStatus('a', T0 + 10_000)?.ledger).toMatchObject({ reserved: 500, spent: 100 });
    s.submit(units('a', 1, 'standard', 400, 1), T0 + 10_000);
    expect(s.admit(T0 + 10_000).map((x) => x.reserved)).toEqual([400]);
    // The late call's charge comes: it was reserved, so nothing passes the budget.
    s.charge([{ tenant: 'a', runId: a!.runId, attempt: 0, tokens: 480 }], T0 + 12_000);
    const l = s.tenantStatus('a', T0 + 12_000)!.ledger;
    expect(l).toMatchObject({ reserved: 420, spent: 580 });
    expect(l.spent + l.reserved).toBeLessThanOrEqual(1000);
  });

  it('a tenant without a budget keeps no linger', () => {
    const s = makeFleet({ settings: { leaseTtlSeconds: 10 }, tenants: { a: {} } });
    s.submit(units('a', 1, 'standard', 600), T0);
    s.admit(T0);
    s.expireLeases(T0 + 10_000);
    expect(s.tenantStatus('a', T0 + 10_000)?.ledger.reserved).toBe(0);
  });

  it('rolls periods over on UTC calendar boundaries', () => {
    const t = Date.UTC(2024, 1, 29, 23, 59, 59, 999);
    expect(periodStartOf('hour', t)).toBe(Date.UTC(2024, 1, 29, 23));
    expect(periodStartOf('day', t)).toBe(Date.UTC(2024, 1, 29));
    expect(periodStartOf('month', t)).toBe(Date.UTC(2024, 1, 1));
    expect(periodEndOf('month', Date.UTC(2024, 1, 1))).toBe(Date.UTC(2024, 2, 1));
    expect(periodEndOf('month', Date.UTC(2024, 11, 1))).toBe(Date.UTC(2025, 0, 1));
    expect(periodEndOf('none', t)).toBeNull();
    const s = makeFleet({ tenants: { a: { budget: { tokens: 500, period: 'month' } } } });
    s.submit(units('a', 1, 'standard', 500), T0);
    s.release([{ runId: s.admit(T0)[0]!.runId, attempt: 0, usedTokens: 500, outcome: 'completed' }], T0);
    expect(s.tenantStatus('a', Date.UTC(2025, 0, 31, 23))?.ledger.remaining).toBe(0);
    expect(s.tenantStatus('a', Date.UTC(2025, 1, 1))?.ledger).toMatchObject({
      remaining: 500,
      periodStart: '2025-02-01T00:00:00.000Z',
    });
  });

  it('refuses at the door what the budget cannot cover, with Retry-After to the period end', () => {
    const s = makeFleet({
      tenants: {
        a: { budget: { tokens: 1000, period: 'hour' } },
        b: { budget: { tokens: 10, period: 'none' } },
      },
    });
    const now = T0 + 30 * 60_000 + 500;
    const res = s.submit(units('a', 3, 'standard', 400), now);
    expect(res.map((r) => r.accepted)).toEqual([true, true, false]);
    expect(res[2]).toMatchObject({ code: 'budget_exhausted', retryAfterSeconds: 1800 });
    expect(s.submit(units('b', 1, 'standard', 11), now)[0]).toMatchObject({
      code: 'budget_exhausted',
      retryAfterSeconds: 3600,
    });
    expect(s.submit(units('a', 1, 'standard', 100, 7), T0 + HOUR)[0]?.accepted).toBe(true);
  });

  it('keeps a bounded ring per tenant and fleet-wide, most recent first', () => {
    const s = makeFleet({ settings: { concurrency: 100_000 }, tenants: { a: { maxInFlight: 100_000 } } });
    s.submit(units('a', LEDGER_RING_PER_TENANT + 50), T0);
    s.admit(T0);
    const entries = s.ledgerEntries('a', 1000);
    expect(entries.length).toBe(LEDGER_RING_PER_TENANT);
    expect(entries[0]?.runId).toBe(`a-standard-${LEDGER_RING_PER_TENANT + 49}`);
    expect(s.ledgerEntries('a', 3).length).toBe(3);
    const many = makeFleet({ settings: { concurrency: 100_000 } });
    const n = Math.ceil(LEDGER_RING_TOTAL / 100) + 10;
    for (let i = 0; i < n; i++) {
      many.upsertTenant(
        `t${i}`,
        { weight: 1, maxQueued: 1000, maxInFlight: 1000, budget: { tokens: null, period: 'none' } },
        T0,
      );
      many.submit(units(`t${i}`, 100), T0);
    }
    // Concurrency is capped (MAX_CONCURRENCY): admit, release, admit again to write more than the cap.
    const first = many.admit(T0);
    many.release(
      first.map((a) => ({
        runId: a.runId,
        attempt: a.attempt,
        usedTokens: 1,
        outcome: 'completed' as const,
      })),
      T0,
    );
    many.admit(T0);
    const kept = Array.from({ length: n }, (_, i) => many.ledgerEntries(`t${i}`, 1000).length);
    expect(kept.reduce((x, y) => x + y, 0)).toBe(LEDGER_RING_TOTAL);
  });
});

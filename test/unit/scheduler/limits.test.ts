import { describe, expect, it } from 'vitest';
import { T0, makeFleet, units } from './helpers';

describe('admission limits', () => {
  it('never exceeds the fleet concurrency and resumes as slots free', () => {
    const s = makeFleet({ settings: { concurrency: 7 }, tenants: { a: {} } });
    s.submit(units('a', 20), T0);
    const first = s.admit(T0);
    expect(first.length).toBe(7);
    expect(s.admit(T0)).toEqual([]);
    s.release([{ runId: first[0]!.runId, attempt: 0, usedTokens: 10, outcome: 'completed' }], T0 + 1);
    expect(s.admit(T0 + 1).length).toBe(1);
    expect(s.status(T0 + 1).inFlight).toBe(7);
  });

  it('honours max and numbers admissions with a fleet-wide seq', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 10), T0);
    expect(s.admit(T0, 3).map((a) => a.seq)).toEqual([1, 2, 3]);
    expect(s.admit(T0, 2).map((a) => a.seq)).toEqual([4, 5]);
  });

  it('parks a tenant at its in-flight cap and lets others through', () => {
    const s = makeFleet({ tenants: { capped: { maxInFlight: 2 }, other: {} } });
    s.submit(units('capped', 10), T0);
    s.submit(units('other', 10), T0);
    const adm = s.admit(T0);
    expect(adm.filter((a) => a.tenant === 'capped').length).toBe(2);
    expect(adm.filter((a) => a.tenant === 'other').length).toBe(10);
    expect(s.explain('capped-standard-5', T0)?.code).toBe('tenant_in_flight_cap');
    const c = adm.find((a) => a.tenant === 'capped')!;
    s.release([{ runId: c.runId, attempt: 0, usedTokens: 1, outcome: 'failed' }], T0 + 1);
    const again = s.admit(T0 + 1);
    expect(again.map((a) => a.tenant)).toEqual(['capped']);
  });

  it('applies a lower maxInFlight from upsertTenant without evicting running units', () => {
    const s = makeFleet({ tenants: { a: { maxInFlight: 10 } } });
    s.submit(units('a', 20), T0);
    expect(s.admit(T0).length).toBe(10);
    s.upsertTenant(
      'a',
      { weight: 1, maxQueued: 100, maxInFlight: 3, budget: { tokens: null, period: 'none' } },
      T0,
    );
    expect(s.tenantStatus('a', T0)?.inFlight).toBe(10);
    expect(s.admit(T0)).toEqual([]);
  });

  it('meters admitted cost with the tokens-per-minute bucket', () => {
    const s = makeFleet({
      governor: { initialTokensPerMinute: 6000, minTokensPerMinute: 1000, maxTokensPerMinute: 6000 },
      tenants: { a: { maxInFlight: 1000 } },
    });
    s.submit(units('a', 100, 'standard', 1000), T0);
    // The bucket holds 5 s of 6,000 tokens/min (500): a unit of 1,000 passes when it is full, the
    // next waits for the debt and a full bucket again (1,000 tokens at 100 a second).
    expect(s.admit(T0).length).toBe(1);
    expect(s.explain('a-standard-1', T0)?.code).toBe('governor');
    expect(s.nextWakeAt(T0)).toBe(T0 + 10_000);
    expect(s.admit(T0 + 9_999).length).toBe(0);
    expect(s.admit(T0 + 10_000).length).toBe(1);
  });

  it('lets a unit bigger than the whole bucket through when the bucket is full', () => {
    const s = makeFleet({
      settings: { leaseTtlSeconds: 600 },
      governor: { initialTokensPerMinute: 6000, minTokensPerMinute: 1000, maxTokensPerMinute: 6000 },
      tenants: { a: {} },
    });
    s.submit(units('a', 2, 'standard', 9000), T0);
    expect(s.admit(T0).length).toBe(1);
    // The overdraft is paid back before the next unit: 3,000 tokens of debt plus a full bucket.
    expect(s.nextWakeAt(T0)).toBe(T0 + 90_000);
    expect(s.admit(T0 + 89_000).length).toBe(0);
    expect(s.admit(T0 + 90_000).length).toBe(1);
  });

  it('takes the lower of the operator concurrency and the governor limit', () => {
    const s = makeFleet({
      settings: { concurrency: 100 },
      governor: { maxConcurrency: 4 },
      tenants: { a: {} },
    });
    s.submit(units('a', 10), T0);
    expect(s.admit(T0).length).toBe(4);
    s.patchSettings({ concurrency: 2 });
    expect(s.status(T0).config.concurrency).toBe(2);
  });

  it('counts cancelled queued units exactly and never admits them', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 10), T0);
    expect(s.cancel(['a-standard-0', 'a-standard-5', 'nope', 'a-standard-5'], T0)).toEqual([
      'a-standard-0',
      'a-standard-5',
    ]);
    expect(s.status(T0).queued.total).toBe(8);
    expect(s.tenantStatus('a', T0)?.queuedByPriority.standard).toBe(8);
    const adm = s.admit(T0).map((a) => a.runId);
    expect(adm).not.toContain('a-standard-0');
    expect(adm).not.toContain('a-standard-5');
    expect(adm.length).toBe(8);
    expect(s.status(T0).counters.cancelled).toBe(2);
    expect(s.cancel([adm[0]!], T0)).toEqual([]);
  });
});

describe('drain switch', () => {
  it('stops admitting, reports draining then drained, and resumes', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 5), T0);
    const adm = s.admit(T0, 2);
    s.drain('hold', T0);
    expect(s.status(T0)).toMatchObject({ mode: 'draining', intake: 'hold', inFlight: 2 });
    expect(s.admit(T0)).toEqual([]);
    expect(s.explain('a-standard-3', T0)?.code).toBe('draining');
    s.release(
      adm.map((a) => ({ runId: a.runId, attempt: 0, usedTokens: 1, outcome: 'completed' as const })),
      T0,
    );
    expect(s.status(T0).mode).toBe('drained');
    expect(s.nextWakeAt(T0)).toBeNull();
    s.resume(T0);
    expect(s.status(T0)).toMatchObject({ mode: 'open', intake: 'open' });
    expect(s.admit(T0).length).toBe(3);
  });

  it('refuses or holds new work at the door', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.drain('refuse', T0);
    const [r] = s.submit(units('a', 1), T0);
    expect(r).toMatchObject({ accepted: false, code: 'draining' });
    expect(r?.accepted === false && r.retryAfterSeconds).toBe(60);
    s.drain('hold', T0);
    expect(s.submit(units('a', 1), T0)[0]).toMatchObject({ accepted: true, held: true, duplicate: false });
    expect(s.status(T0).counters).toMatchObject({ submitted: 1, shed: 1 });
  });
});

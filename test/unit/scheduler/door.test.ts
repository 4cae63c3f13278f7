import { describe, expect, it } from 'vitest';
import type { SubmitResult } from '../../../src/scheduler';
import { T0, makeFleet, units } from './helpers';

const retryAfter = (r: SubmitResult | undefined) => (r && !r.accepted ? r.retryAfterSeconds : undefined);

describe('the door', () => {
  it('refuses unknown tenants without counting a shed', () => {
    const s = makeFleet();
    expect(s.submit(units('ghost', 1), T0)[0]).toMatchObject({ accepted: false, code: 'unknown_tenant' });
    expect(s.status(T0).counters.shed).toBe(0);
  });

  it('sheds past the tenant backlog cap, and the Retry-After follows its admission rate', () => {
    const run = (perSecond: number) => {
      const s = makeFleet({
        settings: { concurrency: 10_000 },
        tenants: { a: { maxQueued: 100, maxInFlight: 10_000 } },
      });
      // A minute of steady admissions at `perSecond` builds the tenant's rate estimate.
      for (let sec = 0; sec < 60; sec++) {
        s.submit(units('a', perSecond, 'standard', 10, sec * perSecond), T0 + sec * 1000);
        s.admit(T0 + sec * 1000);
      }
      s.submit(units('a', 100, 'standard', 10, 1e6), T0 + 60_000);
      return s.submit(units('a', 40, 'standard', 10, 2e6), T0 + 60_000);
    };
    const slow = run(1);
    const fast = run(20);
    expect(slow.every((r) => !r.accepted && r.code === 'queue_full')).toBe(true);
    // The k-th refused unit needs k admissions to make room: later ones wait longer.
    expect(retryAfter(slow[39])).toBeGreaterThan(retryAfter(slow[0])!);
    expect(retryAfter(slow[39])).toBeGreaterThanOrEqual(30);
    expect(retryAfter(slow[39])).toBeLessThanOrEqual(60);
    expect(retryAfter(fast[39])).toBeLessThanOrEqual(3);
    expect(retryAfter(fast[0])).toBe(1);
  });

  it('falls back to the fleet rate times the weight share for a tenant never admitted', () => {
    const s = makeFleet({
      settings: { concurrency: 10_000 },
      tenants: { busy: { maxInFlight: 10_000, maxQueued: 100_000 }, cold: { maxQueued: 0, weight: 1 } },
    });
    for (let sec = 0; sec < 60; sec++) {
      s.submit(units('busy', 10, 'standard', 10, sec * 10), T0 + sec * 1000);
      s.admit(T0 + sec * 1000);
    }
    s.submit(units('busy', 5, 'standard', 10, 1e6), T0 + 60_000);
    const [r] = s.submit(units('cold', 1), T0 + 60_000);
    expect(r).toMatchObject({ accepted: false, code: 'queue_full' });
    // Fleet ~10/s; cold would get half of it (weights 1:1 among backlogged tenants): ~1 unit per 0.2 s.
    expect(retryAfter(r)).toBe(1);
  });

  it('sheds past the global backlog cap with a rate-based Retry-After', () => {
    const s = makeFleet({ settings: { globalMaxQueued: 10 }, tenants: { a: {}, b: {} } });
    s.submit(units('a', 10), T0);
    const [r] = s.submit(units('b', 1), T0);
    expect(r).toMatchObject({ accepted: false, code: 'queue_full' });
    expect(retryAfter(r)).toBeGreaterThanOrEqual(1);
    expect(retryAfter(r)).toBeLessThanOrEqual(3600);
    expect(s.status(T0).counters).toMatchObject({ submitted: 10, shed: 1 });
  });

  it('treats a repeated runId as a duplicate that changes nothing', () => {
    const s = makeFleet({ tenants: { a: {} } });
    const [u] = units('a', 1);
    expect(s.submit([u!, u!], T0).map((r) => r.accepted && r.duplicate)).toEqual([false, true]);
    expect(s.status(T0).queued.total).toBe(1);
    s.admit(T0);
    expect(s.submit([u!], T0)[0]).toMatchObject({ accepted: true, duplicate: true, held: false });
    expect(s.status(T0).counters.submitted).toBe(1);
    expect(s.isKnown(u!.runId)).toBe(true);
  });

  it('accepts a re-submission after lease expiry even when the tenant is at maxQueued', () => {
    const s = makeFleet({ settings: { leaseTtlSeconds: 1 }, tenants: { a: { maxQueued: 1 } } });
    const [u] = units('a', 1);
    s.submit([u!], T0);
    s.admit(T0);
    s.submit(units('a', 1, 'standard', 100, 1), T0);
    expect(s.expireLeases(T0 + 1000).length).toBe(1);
    expect(s.submit([{ ...u!, attempt: 1 }], T0 + 1000)[0]).toMatchObject({
      accepted: true,
      duplicate: false,
    });
    expect(s.tenantStatus('a', T0)?.queuedByPriority.standard).toBe(2);
    expect(s.status(T0).counters.expired).toBe(1);
  });

  it('a retry that arrives before the scheduler expired the old lease ends that lease first, and its late calls are still charged', () => {
    const s = makeFleet({ tenants: { a: {} } });
    const [u] = units('a', 1);
    const id = u!.runId;
    s.submit([u!], T0);
    s.admit(T0);
    s.charge([{ tenant: 'a', runId: id, attempt: 0, tokens: 40 }], T0);
    s.renew([{ runId: id, attempt: 0, usedTokens: 40, perCall: true }], T0);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 60, spent: 40 });
    expect(s.submit([{ ...u!, attempt: 1 }], T0)[0]).toMatchObject({ accepted: true, duplicate: false });
    expect(s.status(T0)).toMatchObject({ inFlight: 0, queued: { total: 1 } });
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 0, spent: 40 });
    // The old attempt's step was still running (a local activity waiting out a Retry-After): the
    // provider billed its call after the lease ended, and the ledger books it all the same.
    s.charge([{ tenant: 'a', runId: id, attempt: 0, tokens: 60 }], T0);
    s.release([{ runId: id, attempt: 0, usedTokens: 100, outcome: 'completed', perCall: true }], T0);
    expect(s.tenantStatus('a', T0)?.ledger).toMatchObject({ reserved: 0, spent: 100 });
    expect(s.admit(T0)[0]).toMatchObject({ runId: id, attempt: 1 });
  });

  it('sanitises odd input instead of throwing', () => {
    const s = makeFleet();
    s.upsertTenant(
      'odd',
      { weight: -1, maxQueued: NaN, maxInFlight: 2.7, budget: { tokens: Infinity, period: 'week' as never } },
      T0,
    );
    expect(s.tenantStatus('odd', T0)?.settings).toEqual({
      weight: 1,
      maxQueued: 10_000,
      maxInFlight: 2,
      budget: { tokens: null, period: 'none' },
    });
    const [r] = s.submit([{ runId: 'x', tenant: 'odd', priority: 'urgent' as never, cost: -5 }], T0);
    expect(r?.accepted).toBe(true);
    expect(s.admit(T0)[0]).toMatchObject({ priority: 'standard', reserved: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { defaultTenantSettings } from '../../../src/scheduler';
import { MAX_CORE_TENANTS, TENANT_IDLE_EVICT_MS } from '../../../src/scheduler/limits';
import { T0, makeFleet, units } from './helpers';

describe('idle tenants leave the core', () => {
  it('evicts only tenants with nothing queued, in flight or spent against a budget, idle long enough', () => {
    const s = makeFleet({
      tenants: {
        idle: {},
        budgeted: { budget: { tokens: 1000, period: 'month' } },
        queued: { maxInFlight: 0 },
        busy: {},
      },
    });
    for (const t of ['idle', 'budgeted', 'queued', 'busy']) s.submit(units(t, 1), T0);
    const admitted = s.admit(T0);
    const done = admitted.filter((a) => a.tenant === 'idle' || a.tenant === 'budgeted');
    s.release(
      done.map((a) => ({
        runId: a.runId,
        attempt: a.attempt,
        usedTokens: 10,
        outcome: 'completed' as const,
      })),
      T0,
    );
    expect(s.evictIdle(T0 + TENANT_IDLE_EVICT_MS - 1)).toEqual([]);
    const later = T0 + TENANT_IDLE_EVICT_MS;
    s.renew([{ runId: 'busy-standard-0', attempt: 0, usedTokens: 1 }], later - 1);
    expect(s.evictIdle(later)).toEqual(['idle']);
    expect(s.tenantStatus('idle', later)).toBeUndefined();
    expect(s.ledgerEntries('idle', 10)).toEqual([]);
    // It comes back as the API re-sends it: unknown first, then accepted after the upsert.
    expect(s.submit(units('idle', 1, 'standard', 100, 5), later)[0]).toMatchObject({
      code: 'unknown_tenant',
    });
    expect(s.upsertTenant('idle', defaultTenantSettings(), later)).toBe(true);
    expect(s.submit(units('idle', 1, 'standard', 100, 5), later)[0]).toMatchObject({ accepted: true });
    // Budgeted spend survives (spent is not forgotten) until its period rolls over.
    expect(s.tenantStatus('budgeted', later)?.ledger.spent).toBe(10);
  });

  it('keeps a tenant whose submissions are refused for now (a batch offering its items again)', () => {
    const s = makeFleet({
      settings: { globalMaxQueued: 1 },
      tenants: { crowd: { maxInFlight: 0 }, batcher: {} },
    });
    s.submit(units('crowd', 1), T0);
    const later = T0 + TENANT_IDLE_EVICT_MS;
    expect(s.submit(units('batcher', 1), later - 1000)[0]).toMatchObject({
      accepted: false,
      code: 'queue_full',
    });
    expect(s.evictIdle(later)).toEqual([]);
    expect(s.evictIdle(later + TENANT_IDLE_EVICT_MS)).toEqual(['batcher']);
  });

  it('a full core makes room from its idlest idle tenant, and refuses a new one when none is idle', () => {
    const s = makeFleet();
    for (let i = 0; i < MAX_CORE_TENANTS; i++) s.upsertTenant(`t${i}`, defaultTenantSettings(), T0 + i);
    for (let i = 1; i < MAX_CORE_TENANTS; i++) s.submit(units(`t${i}`, 1, 'batch'), T0);
    expect(s.upsertTenant('newcomer', defaultTenantSettings(), T0 + 5)).toBe(true);
    expect(s.tenantStatus('t0', T0 + 5)).toBeUndefined();
    expect(s.tenantCount()).toBe(MAX_CORE_TENANTS);
    s.submit(units('newcomer', 1, 'batch'), T0);
    expect(s.upsertTenant('late', defaultTenantSettings(), T0 + 6)).toBe(false);
    expect(s.submit(units('late', 1), T0 + 6)[0]).toMatchObject({ accepted: false, code: 'unknown_tenant' });
  });
});

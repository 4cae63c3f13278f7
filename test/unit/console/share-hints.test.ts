import { describe, expect, it } from 'vitest';
import { shareHint } from '../../../src/api/console/share-hints';
import type { Priority, TenantStatus } from '../../../src/scheduler/types';

/** Key figures do not enter a share hint. */
const oneKey = { keys: 1, buckets: 0 };

function tenant(
  id: string,
  queued: Partial<Record<Priority, number>> = {},
  o: { inFlight?: number; maxInFlight?: number; budget?: number; remaining?: number } = {},
): TenantStatus {
  const budget = o.budget ?? null;
  return {
    tenant: id,
    settings: {
      weight: 1,
      maxQueued: 100,
      maxInFlight: o.maxInFlight ?? 10,
      budget: { tokens: budget, period: budget === null ? 'none' : 'day' },
    },
    queuedByPriority: { interactive: 0, standard: 0, batch: 0, ...queued },
    keysQueuedByPriority: { interactive: oneKey, standard: oneKey, batch: oneKey },
    inFlight: o.inFlight ?? 0,
    ledger: {
      budget,
      period: budget === null ? 'none' : 'day',
      reserved: 0,
      spent: 0,
      remaining: o.remaining ?? budget,
      periodStart: 'p0',
    },
  };
}

describe('share hints: why a tenant got less than its weight entitles it to', () => {
  it('says nothing near or above the entitlement, or without one', () => {
    const t = tenant('a', { batch: 5 });
    const other = tenant('b', { interactive: 5 });
    expect(shareHint(t, 0.45, 0.5, [t, other])).toBeNull();
    expect(shareHint(t, 0.7, 0.5, [t, other])).toBeNull();
    expect(shareHint(t, null, null, [t, other])).toBeNull();
  });

  it('names the lane when its backlog waits below another tenant’s', () => {
    const t = tenant('a', { batch: 5 });
    const other = tenant('b', { interactive: 2 });
    expect(shareHint(t, 0.4 * 0.5, 0.5, [t, other])).toEqual({
      reason: 'lane',
      text: "Its backlog waits in the batch lane; b's interactive work is admitted first.",
    });
    // The same lane as everyone else: the lane does not explain it.
    expect(shareHint(t, 0.2, 0.5, [t, tenant('b', { batch: 9 })])).toBeNull();
  });

  it('names the cap, then the budget, ahead of the lane', () => {
    const capped = tenant('a', { batch: 5 }, { inFlight: 2, maxInFlight: 2 });
    const other = tenant('b', { interactive: 2 });
    expect(shareHint(capped, 0.1, 0.5, [capped, other])?.reason).toBe('cap');
    const broke = tenant('a', { batch: 5 }, { inFlight: 2, maxInFlight: 2, budget: 1000, remaining: 0 });
    const hint = shareHint(broke, 0.1, 0.5, [broke, other]);
    expect(hint?.reason).toBe('budget');
    expect(hint?.text).toMatch(/day budget of 1,000 tokens is spent/);
  });

  it('says it asked for less when nothing of it is queued', () => {
    const idle = tenant('a', {}, { inFlight: 1 });
    expect(shareHint(idle, 0.1, 0.5, [idle])?.reason).toBe('demand');
  });
});

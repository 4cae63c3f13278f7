import { describe, expect, it } from 'vitest';
import type { UnitSubmission } from '../../../src/scheduler';
import { MAX_NAMED_KEYS, bucketOf } from '../../../src/scheduler/key-queue';
import type { Priority } from '../../../src/scheduler/types';
import { T0, makeFleet } from './helpers';

const unit = (runId: string, priority: Priority, fairnessKey?: string): UnitSubmission => ({
  runId,
  tenant: 'a',
  priority,
  cost: 100,
  ...(fairnessKey === undefined ? {} : { fairnessKey }),
});

const fleet = () => makeFleet({ settings: { concurrency: 1 }, tenants: { a: { maxQueued: 10_000 } } });
const keysOf = (s: ReturnType<typeof fleet>) => s.tenantStatus('a', T0)?.keysQueuedByPriority;

describe("the tenant status's fairness-key figures", () => {
  it('counts the keys with queued units per lane, the default key as one', () => {
    const s = fleet();
    expect(keysOf(s)).toEqual({
      interactive: { keys: 0, buckets: 0 },
      standard: { keys: 0, buckets: 0 },
      batch: { keys: 0, buckets: 0 },
    });
    s.submit(
      [
        unit('d-0', 'standard'),
        unit('d-1', 'standard'),
        unit('u1-0', 'standard', 'user-1'),
        unit('u1-1', 'standard', 'user-1'),
        unit('u2-0', 'standard', 'user-2'),
        unit('i-0', 'interactive', 'user-1'),
      ],
      T0,
    );
    expect(keysOf(s)).toEqual({
      interactive: { keys: 1, buckets: 0 },
      standard: { keys: 3, buckets: 0 },
      batch: { keys: 0, buckets: 0 },
    });
  });

  it('drops a key once its last unit is admitted or cancelled', () => {
    const s = fleet();
    s.submit([unit('p-0', 'standard', 'p'), unit('q-0', 'standard', 'q'), unit('q-1', 'standard', 'q')], T0);
    s.cancel(['q-0', 'q-1'], T0);
    expect(keysOf(s)?.standard).toEqual({ keys: 1, buckets: 0 });
    expect(s.admit(T0).map((a) => a.runId)).toEqual(['p-0']);
    expect(keysOf(s)?.standard).toEqual({ keys: 0, buckets: 0 });
  });

  it('counts the hash buckets that keys past the bound share', () => {
    const s = fleet();
    const extra = Array.from({ length: 40 }, (_, i) => `late-${i}`);
    s.submit(
      [
        ...Array.from({ length: MAX_NAMED_KEYS }, (_, i) => unit(`n-${i}`, 'batch', `named-${i}`)),
        ...extra.map((k) => unit(k, 'batch', k)),
      ],
      T0,
    );
    const buckets = new Set(extra.map(bucketOf)).size;
    expect(buckets).toBeGreaterThan(1);
    expect(keysOf(s)?.batch).toEqual({ keys: MAX_NAMED_KEYS + buckets, buckets });
  });
});

import { describe, expect, it } from 'vitest';
import type { UnitSubmission } from '../../../src/scheduler';
import { MAX_FLOW_KEYS } from '../../../src/scheduler/limits';
import { T0, makeFleet, units } from './helpers';

describe('explain', () => {
  it('is null for runs that are not queued', () => {
    const s = makeFleet({ tenants: { a: {} } });
    s.submit(units('a', 1), T0);
    s.admit(T0);
    expect(s.explain('a-standard-0', T0)).toBeNull();
    expect(s.explain('nope', T0)).toBeNull();
  });

  it('says fair_share with the position in the lane across tenants', () => {
    const s = makeFleet({ settings: { concurrency: 0 }, tenants: { a: {}, b: {} } });
    s.submit(units('a', 5), T0);
    s.submit(units('b', 5), T0);
    const w = s.explain('b-standard-2', T0);
    expect(w).toMatchObject({ code: 'fair_share', lane: 'standard', position: 6 });
    expect(w?.message).toMatch(/5 units are ahead/);
    expect(s.explain('a-standard-0', T0)?.position).toBe(1);
    expect(s.explain('b-standard-0', T0)?.position).toBe(2);
  });

  it('predicts the admission order it reports', () => {
    const s = makeFleet({
      settings: { concurrency: 0 },
      tenants: { a: { weight: 1 }, b: { weight: 2 }, c: { weight: 3 } },
    });
    s.submit(units('a', 20, 'standard', 100), T0);
    s.submit(units('b', 20, 'standard', 250), T0);
    s.submit(units('c', 20, 'standard', 50), T0);
    const ids = ['a', 'b', 'c'].flatMap((t) => Array.from({ length: 20 }, (_, i) => `${t}-standard-${i}`));
    const predicted = new Map(ids.map((id) => [id, s.explain(id, T0)!.position!]));
    s.patchSettings({ concurrency: 1000 });
    const actual = s.admit(T0).map((a) => a.runId);
    actual.forEach((id, i) => expect(predicted.get(id)).toBe(i + 1));
  });

  it('says priority when a higher lane is in the way', () => {
    const s = makeFleet({ settings: { concurrency: 0 }, tenants: { a: {} } });
    s.submit(units('a', 3, 'interactive'), T0);
    s.submit(units('a', 3, 'batch'), T0);
    const w = s.explain('a-batch-1', T0);
    expect(w).toMatchObject({ code: 'priority', lane: 'batch', position: 2 });
    expect(w?.message).toMatch(/5%/);
    expect(s.explain('a-interactive-2', T0)?.code).toBe('fair_share');
  });

  it('says governor when the governor limit is what binds', () => {
    const s = makeFleet({
      settings: { concurrency: 100 },
      governor: { maxConcurrency: 100 },
      tenants: { a: { maxInFlight: 100 } },
    });
    s.observe([{ at: T0, calls: 1, throttled: 1, maxRetryAfterMs: 0, tokens: 0 }], T0);
    s.submit(units('a', 100), T0);
    s.admit(T0);
    expect(s.explain('a-standard-99', T0)).toMatchObject({ code: 'governor' });
  });
});

const keyed = (runId: string, fairnessKey: string, cost = 100, tenant = 'a'): UnitSubmission => ({
  runId,
  tenant,
  priority: 'standard',
  cost,
  fairnessKey,
});

describe('explain by fairness key', () => {
  it("names the run's key and how many of its tenant's keys go first", () => {
    const s = makeFleet({ settings: { concurrency: 0 }, tenants: { a: {} } });
    s.submit(
      Array.from({ length: 10 }, (_, i) => keyed(`whale-${i}`, 'whale')),
      T0,
    );
    s.submit(
      ['u1', 'u2', 'u3'].flatMap((k) => [keyed(`${k}-0`, k), keyed(`${k}-1`, k)]),
      T0,
    );
    // Round one: whale, u1, u2, u3 (ties on equal tags break by the key's stored name); round two after.
    const w = s.explain('u2-1', T0)!;
    expect(w).toMatchObject({ code: 'fair_share', fairnessKey: 'u2' });
    expect(w.keyPosition).toMatchObject({ keysQueued: 4, unitsAheadInKey: 1 });
    expect(w.keyPosition!.keysAhead).toBe(3);
    expect(w.message).toMatch(/Inside tenant a, 3 of its 4 keys go first/);
    // The whale's tenth run waits behind every other key's runs: its 9 own, and the 6 of the others.
    expect(s.explain('whale-9', T0)!.keyPosition).toMatchObject({
      unitsAheadInKey: 9,
      unitsAheadInTenant: 15,
      keysAhead: 3,
    });
    expect(s.explain('whale-9', T0)!.position).toBe(16);
    expect(s.explain('whale-0', T0)!.keyPosition!.unitsAheadInTenant).toBeLessThanOrEqual(3);
  });

  it('predicts the admission order it reports, with key weights and two tenants', () => {
    const s = makeFleet({
      settings: { concurrency: 0 },
      tenants: { a: { keyWeights: { vip: 3 } }, b: { weight: 2 } },
    });
    const subs = [
      ...Array.from({ length: 12 }, (_, i) => keyed(`a-whale-${i}`, 'whale', 100 + 10 * i)),
      ...Array.from({ length: 6 }, (_, i) => keyed(`a-vip-${i}`, 'vip', 150)),
      ...Array.from({ length: 4 }, (_, i) => keyed(`a-u-${i}`, `user-${i % 2}`, 80)),
      ...Array.from({ length: 3 }, (_, i) => ({
        ...keyed(`a-plain-${i}`, 'x', 120),
        fairnessKey: undefined,
      })),
      ...Array.from({ length: 10 }, (_, i) => keyed(`b-${i}`, `k${i % 3}`, 200, 'b')),
    ];
    s.submit(subs, T0);
    const predicted = new Map(subs.map((u) => [u.runId, s.explain(u.runId, T0)!]));
    s.patchSettings({ concurrency: 1000 });
    const actual = s.admit(T0).map((a) => a.runId);
    expect(actual).toHaveLength(subs.length);
    actual.forEach((id, i) => expect(predicted.get(id)!.position).toBe(i + 1));
    // Within tenant a: the units of a that admission put ahead are what explain counted.
    const ofA = actual.filter((id) => id.startsWith('a-'));
    ofA.forEach((id, i) => expect(predicted.get(id)!.keyPosition!.unitsAheadInTenant).toBe(i));
    expect(predicted.get('a-plain-0')).not.toHaveProperty('fairnessKey');
    expect(predicted.get('a-plain-0')!.keyPosition).toBeDefined();
  });

  it('names the bucket a key shares past the bound, and says nothing of keys when none are used', () => {
    const s = makeFleet({ settings: { concurrency: 0 }, tenants: { a: {}, b: {} } });
    s.submit(
      Array.from({ length: MAX_FLOW_KEYS }, (_, i) => keyed(`k-${i}`, `user-${i}`)),
      T0,
    );
    const last = s.explain(`k-${MAX_FLOW_KEYS - 1}`, T0)!;
    expect(last.fairnessKey).toBe(`user-${MAX_FLOW_KEYS - 1}`);
    expect(last.keyPosition!.bucket).toMatch(/^#\d+$/);
    expect(s.explain('k-0', T0)!.keyPosition).not.toHaveProperty('bucket');
    s.submit(units('b', 3), T0);
    const plain = s.explain('b-standard-2', T0)!;
    expect(plain).not.toHaveProperty('fairnessKey');
    expect(plain).not.toHaveProperty('keyPosition');
    expect(plain.message).not.toMatch(/Inside tenant/);
  });
});

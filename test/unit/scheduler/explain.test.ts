import { describe, expect, it } from 'vitest';
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

import { describe, expect, it } from 'vitest';
import { PASS_OVER_BOUND_MS } from '../../../src/scheduler/admission';
import { T0, makeFleet, units } from './helpers';

/** A fleet metered at 600,000 tokens a minute: a 50,000-token bucket, 600,000 in flight per 60 s lease. */
const metered = () =>
  makeFleet({
    settings: { concurrency: 100, leaseTtlSeconds: 60 },
    governor: { initialTokensPerMinute: 600_000, minTokensPerMinute: 10_000, maxTokensPerMinute: 600_000 },
    tenants: { a: { maxInFlight: 100 }, b: { maxInFlight: 100 } },
  });

const done = (runId: string, usedTokens: number) => ({
  runId,
  attempt: 0,
  usedTokens,
  outcome: 'completed' as const,
});

describe('a unit that does not fit now is passed over, not waited behind', () => {
  it('admits other tenants and lanes while a unit above the in-flight cap waits', () => {
    const s = metered();
    s.submit(units('b', 5, 'standard', 100), T0);
    expect(s.admit(T0)).toHaveLength(5);
    // A's one step declares the per-run cap; the standard lane is owed its floor.
    s.submit([{ runId: 'a-big', tenant: 'a', priority: 'standard', cost: 1_000_000 }], T0 + 1000);
    s.submit(units('b', 10, 'interactive', 100), T0 + 1000);
    const adm = s.admit(T0 + 1000);
    expect(adm.map((a) => a.runId).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `b-interactive-${i}`).sort(),
    );
    // The big unit says what it waits for: the tokens in flight, not its fair share.
    const w = s.explain('a-big', T0 + 1000);
    expect(w?.code).toBe('governor');
    expect(w?.message).toMatch(/1000000 tokens/);
  });

  it('passes a big head within one lane too: smaller units of other tenants go on', () => {
    const s = metered();
    s.submit(units('b', 1, 'standard', 100), T0);
    expect(s.admit(T0)).toHaveLength(1);
    s.submit([{ runId: 'a-big', tenant: 'a', priority: 'standard', cost: 1_000_000 }], T0);
    s.submit(units('b', 3, 'standard', 100, 1), T0);
    expect(s.admit(T0).map((a) => a.runId)).toEqual(['b-standard-1', 'b-standard-2', 'b-standard-3']);
  });

  it('reserves the fleet for a unit that has waited the bound, then admits it when it fits', () => {
    const s = metered();
    s.submit(units('b', 5, 'standard', 100), T0);
    const running = s.admit(T0);
    s.submit([{ runId: 'a-big', tenant: 'a', priority: 'standard', cost: 1_000_000 }], T0);
    expect(s.admit(T0)).toEqual([]);
    // Before the bound, B's new work goes on.
    s.submit(units('b', 2, 'interactive', 100), T0 + 1000);
    expect(s.admit(T0 + 1000)).toHaveLength(2);
    // Once the big unit has waited the bound, nothing else is admitted until it is.
    const late = T0 + PASS_OVER_BOUND_MS;
    s.submit(units('b', 2, 'interactive', 100, 2), late);
    expect(s.admit(late)).toEqual([]);
    expect(s.explain('b-interactive-2', late)?.message).toMatch(/held for a-big/);
    const all = [...running.map((a) => a.runId), 'b-interactive-0', 'b-interactive-1'];
    s.release(
      all.map((id) => done(id, 100)),
      late + 1,
    );
    expect(s.admit(late + 1).map((a) => a.runId)).toEqual(['a-big']);
  });

  it('settles the bucket debt of a big unit to its actual usage when it ends', () => {
    const s = metered();
    s.submit([{ runId: 'a-big', tenant: 'a', priority: 'standard', cost: 1_000_000 }], T0);
    expect(s.admit(T0)).toHaveLength(1);
    s.release([done('a-big', 100)], T0 + 1000);
    s.submit(units('b', 1, 'interactive', 100), T0 + 1000);
    // ~940,000 tokens of debt would take 94 s to pay back; the run used 100, so the bucket starts
    // again from empty and covers 100 tokens 10 ms later.
    expect(s.admit(T0 + 1010).map((a) => a.runId)).toEqual(['b-interactive-0']);
  });

  it('still meters a big unit that used what it declared', () => {
    const s = metered();
    s.submit([{ runId: 'a-big', tenant: 'a', priority: 'standard', cost: 1_000_000 }], T0);
    expect(s.admit(T0)).toHaveLength(1);
    s.release([done('a-big', 1_000_000)], T0 + 1000);
    s.submit(units('b', 1, 'interactive', 100), T0 + 1000);
    expect(s.admit(T0 + 1010)).toEqual([]);
    expect(s.explain('b-interactive-0', T0 + 1010)?.code).toBe('governor');
  });
});

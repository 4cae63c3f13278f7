import { describe, expect, it } from 'vitest';
import { T0, makeFleet, units } from './helpers';

describe('the summary the scheduler loop shows after every pass', () => {
  it('carries exactly the head figures of the full status, open and draining', () => {
    const s = makeFleet({
      settings: { concurrency: 10 },
      tenants: { a: { maxInFlight: 100, maxQueued: 1000 }, b: { maxInFlight: 100, maxQueued: 1000 } },
    });
    s.submit(units('a', 30, 'batch'), T0);
    s.submit(units('b', 5, 'interactive'), T0);
    s.admit(T0);
    const same = (now: number) => {
      const full = s.status(now);
      expect(s.summary(now)).toEqual({
        mode: full.mode,
        intake: full.intake,
        inFlight: full.inFlight,
        queued: { total: full.queued.total, byPriority: full.queued.byPriority },
        counters: { admitted: full.counters.admitted },
        config: { concurrency: full.config.concurrency },
        governor: {
          concurrencyLimit: full.governor.concurrencyLimit,
          tokensPerMinute: full.governor.tokensPerMinute,
          throttledRecently: full.governor.throttledRecently,
        },
      });
    };
    same(T0);
    s.drain('hold', T0 + 1);
    same(T0 + 1);
  });
});

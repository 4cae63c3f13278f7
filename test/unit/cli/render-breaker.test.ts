import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../src/cli/render';
import { T0, makeFleet, units } from '../scheduler/helpers';

describe('fairway status: the key breaker', () => {
  it('says closed, and when open why admission is paused and when the next probe goes', () => {
    const s = makeFleet({ governor: { breakerProbeMinMs: 5000 }, tenants: { a: {} } });
    s.submit(units('a', 2), T0);
    const show = (now: number) =>
      renderStatus({ ...s.status(now), history: { length: 1, continuedAsNew: 0 } });
    expect(show(T0)).toMatch(/key breaker\s+closed\n/);
    s.observe([{ at: T0, calls: 3, throttled: 0, maxRetryAfterMs: 0, tokens: 0, keyRefused: 3 }], T0);
    expect(show(T0 + 1)).toContain(
      `OPEN: the provider refuses the API key; admission paused since ${new Date(T0).toISOString()}, next probe ${new Date(T0 + 5000).toISOString()} (0 probes)`,
    );
    expect(show(T0 + 5000)).toMatch(/key breaker\s+HALF-OPEN/);
  });
});

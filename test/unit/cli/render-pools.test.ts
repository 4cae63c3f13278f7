import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../src/cli/render';
import type { GovernorStatus, SchedulerStatus } from '../../../src/scheduler/types';
import { T0, makeFleet, units } from '../scheduler/helpers';

function baseStatus(): SchedulerStatus {
  const s = makeFleet({ tenants: { a: {} } });
  s.submit(units('a', 2), T0);
  s.admit(T0);
  return { ...s.status(T0), history: { length: 1, continuedAsNew: 0 } };
}

const keys = (text: string) => text.split('\n').map((l) => l.split(/\s{2,}/)[0]);

describe('fairway status: named model pools', () => {
  it('without pools, shows the rows it always did', () => {
    const s = baseStatus();
    expect(s.pools).toBeUndefined();
    const text = renderStatus(s);
    expect(keys(text)).toEqual([
      'mode',
      'in flight',
      'queued',
      'governor',
      'key breaker',
      'counters',
      'history',
    ]);
    expect(text).not.toMatch(/^pool/m);
    // An empty `pools` renders the same as none.
    expect(renderStatus({ ...s, pools: {} })).toBe(text);
  });

  it('shows one row per named pool after the governor rows: in flight / limit, target, pause, breaker', () => {
    const s = baseStatus();
    const g: GovernorStatus = s.governor;
    const paused = new Date(T0 + 30_000).toISOString();
    const probe = new Date(T0 + 5000).toISOString();
    const text = renderStatus({
      ...s,
      pools: {
        gpt: { ...g, concurrencyLimit: 12, tokensPerMinute: 60_000, inFlight: 3, pausedUntil: paused },
        claude: {
          ...g,
          concurrencyLimit: 4,
          tokensPerMinute: 1_500_000,
          inFlight: 0,
          pausedUntil: null,
          throttledRecently: false,
          breaker: {
            state: 'open',
            reason: 'key_refused',
            since: new Date(T0).toISOString(),
            nextProbeAt: probe,
            probes: 0,
            trips: 1,
          },
        },
      },
    });
    expect(keys(text)).toEqual([
      'mode',
      'in flight',
      'queued',
      'governor',
      'key breaker',
      'pool',
      'pool',
      'counters',
      'history',
    ]);
    const pools = text.split('\n').filter((l) => l.startsWith('pool'));
    expect(pools).toEqual([
      `pool         claude: 0 / 4 in flight, target 1,500,000 tpm, key breaker OPEN (the provider refuses the API key, next probe ${probe})`,
      `pool         gpt: 3 / 12 in flight, target 60,000 tpm, PAUSED until ${paused}, key breaker closed`,
    ]);
    // The default pool's rows are as they were without pools.
    const without = renderStatus(s).split('\n');
    expect(text.split('\n').filter((l) => !l.startsWith('pool'))).toEqual(without);
  });
});

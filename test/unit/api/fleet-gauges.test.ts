import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { applyFleetSnapshot, createFleetGauges } from '../../../src/api/metrics/fleet-gauges';
import { MAX_NAMED_KEYS, bucketOf } from '../../../src/scheduler/key-queue';
import type { GovernorStatus, SchedulerStatus } from '../../../src/scheduler/types';
import { T0, makeFleet, units } from '../scheduler/helpers';

/** A fleet's status (the default pool only), as the API reads it. */
function baseStatus(): SchedulerStatus {
  const s = makeFleet({ tenants: { a: {} } });
  s.submit(units('a', 2), T0);
  s.admit(T0);
  return { ...s.status(T0), history: { length: 7, continuedAsNew: 0 } };
}

/** A named pool's entry: the default governor's shape with its own numbers. */
const pool = (g: GovernorStatus, over: Partial<GovernorStatus & { inFlight: number }>) => ({
  ...g,
  inFlight: 0,
  ...over,
});

async function scrape(status: SchedulerStatus, registry: Registry, g = createFleetGauges(registry)) {
  applyFleetSnapshot(g, { at: T0, status, tenants: null });
  return { text: await registry.metrics(), g };
}

/** The sample lines of one series name. */
const series = (text: string, name: string) =>
  text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('fleet gauges: a pool label on the governor series', () => {
  it('gives the default pool pool="" with the values it had, and one series per named pool', async () => {
    const base = baseStatus();
    const g0 = base.governor;
    const status: SchedulerStatus = {
      ...base,
      pools: {
        gpt: pool(g0, {
          concurrencyLimit: 3,
          tokensPerMinute: 60_000,
          inFlight: 2,
          throttledRecently: true,
          pausedUntil: new Date(T0 + 30_000).toISOString(),
          decreases: 4,
          providerTokensPerMinute: 90_000,
          breaker: { state: 'closed', reason: null, since: null, nextProbeAt: null, probes: 0, trips: 1 },
        }),
        claude: pool(g0, {
          concurrencyLimit: 5,
          tokensPerMinute: 40_000,
          inFlight: 1,
          breaker: {
            state: 'open',
            reason: 'key_refused',
            since: new Date(T0).toISOString(),
            nextProbeAt: new Date(T0 + 5000).toISOString(),
            probes: 0,
            trips: 2,
          },
        }),
      },
    };
    const { text } = await scrape(status, new Registry());
    expect(series(text, 'fairway_governor_concurrency_limit')).toEqual([
      `fairway_governor_concurrency_limit{pool=""} ${g0.concurrencyLimit}`,
      'fairway_governor_concurrency_limit{pool="claude"} 5',
      'fairway_governor_concurrency_limit{pool="gpt"} 3',
    ]);
    expect(series(text, 'fairway_governor_tokens_per_minute')).toEqual([
      `fairway_governor_tokens_per_minute{pool=""} ${g0.tokensPerMinute}`,
      'fairway_governor_tokens_per_minute{pool="claude"} 40000',
      'fairway_governor_tokens_per_minute{pool="gpt"} 60000',
    ]);
    expect(series(text, 'fairway_governor_throttled_recently')).toEqual([
      'fairway_governor_throttled_recently{pool=""} 0',
      'fairway_governor_throttled_recently{pool="claude"} 0',
      'fairway_governor_throttled_recently{pool="gpt"} 1',
    ]);
    // In flight per named pool; the fleet's total stays unlabelled.
    expect(series(text, 'fairway_pool_in_flight')).toEqual([
      'fairway_pool_in_flight{pool="claude"} 1',
      'fairway_pool_in_flight{pool="gpt"} 2',
    ]);
    expect(series(text, 'fairway_in_flight')).toEqual([`fairway_in_flight ${base.inFlight}`]);
    expect(text).toContain('fairway_governor_breaker_state{pool="",state="closed"} 1');
    expect(text).toContain('fairway_governor_breaker_state{pool="claude",state="open"} 1');
    expect(text).toContain('fairway_governor_breaker_state{pool="claude",state="closed"} 0');
    expect(text).toContain('fairway_governor_breaker_state{pool="gpt",state="closed"} 1');
    expect(text).toContain('fairway_governor_breaker_trips_total{pool="claude"} 2');
    expect(text).toContain('fairway_governor_breaker_trips_total{pool="gpt"} 1');
    expect(text).toContain('fairway_governor_decreases_total{pool="gpt"} 4');
    expect(text).toContain(`fairway_governor_decreases_total{pool=""} ${g0.decreases}`);
    // 0 until measured, for every pool (as the unlabelled series was for the default pool).
    expect(series(text, 'fairway_provider_tokens_per_minute')).toEqual([
      'fairway_provider_tokens_per_minute{pool=""} 0',
      'fairway_provider_tokens_per_minute{pool="claude"} 0',
      'fairway_provider_tokens_per_minute{pool="gpt"} 90000',
    ]);
  });

  it("drops a named pool's series when a later status no longer has it", async () => {
    const registry = new Registry();
    const base = baseStatus();
    const g0 = base.governor;
    const withPools: SchedulerStatus = {
      ...base,
      pools: {
        gpt: pool(g0, { concurrencyLimit: 3, inFlight: 2 }),
        claude: pool(g0, { concurrencyLimit: 5, inFlight: 1 }),
      },
    };
    const first = await scrape(withPools, registry);
    expect(first.text).toContain('fairway_pool_in_flight{pool="gpt"} 2');
    const { text } = await scrape(base, registry, first.g);
    expect(text).not.toMatch(/pool="(gpt|claude)"/);
    expect(series(text, 'fairway_pool_in_flight')).toEqual([]);
    expect(series(text, 'fairway_governor_concurrency_limit')).toEqual([
      `fairway_governor_concurrency_limit{pool=""} ${g0.concurrencyLimit}`,
    ]);
    expect(series(text, 'fairway_governor_breaker_state')).toEqual([
      'fairway_governor_breaker_state{pool="",state="closed"} 1',
      'fairway_governor_breaker_state{pool="",state="open"} 0',
      'fairway_governor_breaker_state{pool="",state="half_open"} 0',
    ]);
  });
});

describe('fleet gauges: fairness keys by tenant', () => {
  it("reports each tenant's keys and hash buckets with queued units, by lane, from its status", async () => {
    const s = makeFleet({ tenants: { a: { maxQueued: 1000 }, b: {} }, settings: { concurrency: 1 } });
    const late = Array.from({ length: 20 }, (_, i) => `late-${i}`);
    s.submit(
      [...Array.from({ length: MAX_NAMED_KEYS }, (_, i) => `user-${i}`), ...late].map((k) => ({
        runId: `a-${k}`,
        tenant: 'a',
        priority: 'batch' as const,
        cost: 10,
        fairnessKey: k,
      })),
      T0,
    );
    s.submit(
      [...units('b', 2), { runId: 'b-k', tenant: 'b', priority: 'standard', cost: 10, fairnessKey: 'x' }],
      T0,
    );
    const tenants = ['a', 'b'].map((t) => s.tenantStatus(t, T0)!);
    const registry = new Registry();
    const g = createFleetGauges(registry);
    applyFleetSnapshot(g, { at: T0, status: baseStatus(), tenants });
    const text = await registry.metrics();
    const buckets = new Set(late.map(bucketOf)).size;
    expect(series(text, 'fairway_tenant_keys_queued')).toEqual([
      'fairway_tenant_keys_queued{tenant="a",priority="interactive"} 0',
      'fairway_tenant_keys_queued{tenant="a",priority="standard"} 0',
      `fairway_tenant_keys_queued{tenant="a",priority="batch"} ${MAX_NAMED_KEYS + buckets}`,
      'fairway_tenant_keys_queued{tenant="b",priority="interactive"} 0',
      'fairway_tenant_keys_queued{tenant="b",priority="standard"} 2',
      'fairway_tenant_keys_queued{tenant="b",priority="batch"} 0',
    ]);
    expect(series(text, 'fairway_tenant_key_buckets_queued')).toEqual([
      'fairway_tenant_key_buckets_queued{tenant="a",priority="interactive"} 0',
      'fairway_tenant_key_buckets_queued{tenant="a",priority="standard"} 0',
      `fairway_tenant_key_buckets_queued{tenant="a",priority="batch"} ${buckets}`,
      'fairway_tenant_key_buckets_queued{tenant="b",priority="interactive"} 0',
      'fairway_tenant_key_buckets_queued{tenant="b",priority="standard"} 0',
      'fairway_tenant_key_buckets_queued{tenant="b",priority="batch"} 0',
    ]);
    // A tenant the next read no longer reports leaves no key series behind.
    applyFleetSnapshot(g, { at: T0, status: baseStatus(), tenants: [tenants[1]!] });
    expect(await registry.metrics()).not.toMatch(/fairway_tenant_key\w*\{tenant="a"/);
  });
});

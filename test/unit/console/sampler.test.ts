import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { FleetPort } from '../../../src/contract/fleet-port';
import { z } from 'zod';
import { ConsoleSampler } from '../../../src/api/console/sampler';
import { ConsoleStateSchema } from '../../../src/api/console/schema';
import { zeroCounters } from '../../../src/scheduler/counters';
import type { SchedulerStatus, TenantStatus } from '../../../src/scheduler/types';

function status(
  admitted: { interactive: number; standard: number; batch: number },
  throttled = 0,
): SchedulerStatus {
  return {
    mode: 'open',
    intake: 'open',
    inFlight: 3,
    queued: { total: 5, byPriority: { interactive: 1, standard: 4, batch: 0 }, byTenant: {} },
    counters: { ...zeroCounters(), admittedByPriority: admitted, throttled },
    config: {
      concurrency: 10,
      floors: { standard: 0.1, batch: 0.05 },
      leaseTtlSeconds: 60,
      globalMaxQueued: 100,
      interactiveReserve: 0.05,
      reservedSlots: 1,
    },
    governor: {
      concurrencyLimit: 10,
      tokensPerMinute: 1000,
      throttledRecently: false,
      pausedUntil: null,
      lastThrottleAt: null,
      decreases: 0,
      increases: 0,
      providerTokensPerMinute: 2000,
      servedTokensPerMinute: 900,
      breaker: { state: 'closed', reason: null, since: null, nextProbeAt: null, probes: 0, trips: 0 },
    },
    history: { length: 1, continuedAsNew: 0 },
  };
}

const none = { keys: 0, buckets: 0 };

function tenant(id: string, weight: number, spent: number, queued = 0): TenantStatus {
  return {
    tenant: id,
    settings: { weight, maxQueued: 10, maxInFlight: 10, budget: { tokens: null, period: 'none' } },
    queuedByPriority: { interactive: 0, standard: queued, batch: 0 },
    keysQueuedByPriority: {
      interactive: none,
      standard: { keys: queued > 0 ? 1 : 0, buckets: 0 },
      batch: none,
    },
    inFlight: 0,
    ledger: { budget: null, period: 'none', reserved: 0, spent, remaining: null, periodStart: 'p0' },
  };
}

function harness() {
  const clock = { now: 1_000_000 };
  const world = {
    status: status({ interactive: 0, standard: 0, batch: 0 }),
    tenants: new Map<string, TenantStatus>(),
    sheds: {} as Record<string, number>,
    statusCalls: 0,
    tenantReads: 0,
  };
  const fleet = {
    schedulerStatus: async () => {
      world.statusCalls++;
      await new Promise((r) => setTimeout(r, 5));
      return world.status;
    },
    tenantStatuses: async (ids: string[]) => {
      world.tenantReads++;
      return ids.map((id) => world.tenants.get(id) ?? null);
    },
  } as unknown as FleetPort;
  const sampler = new ConsoleSampler({
    fleet,
    tenants: () => [...world.tenants.keys()],
    sheds: async () => world.sheds,
    log: pino({ level: 'silent' }),
    now: () => clock.now,
    sampleMs: 2000,
    historyMs: 10_000,
    shareWindowMs: 60_000,
  });
  return { clock, world, sampler };
}

describe('the console sampler', () => {
  it('turns counters into rates per second, and a counter that went down into a restart', async () => {
    const { clock, world, sampler } = harness();
    await sampler.sample();
    clock.now += 2000;
    world.status = status({ interactive: 4, standard: 10, batch: 0 }, 6);
    world.sheds = { queue_full: 8 };
    await sampler.sample();
    clock.now += 2000;
    world.status = status({ interactive: 2, standard: 0, batch: 0 }); // a new scheduler chain
    await sampler.sample();
    const [first, second, third] = sampler.state().samples;
    expect(first!.admissionsPerSecond).toBeNull();
    expect(second!.admissionsPerSecond).toEqual({ interactive: 2, standard: 5, batch: 0 });
    expect(second!.throttledPerSecond).toBe(3);
    expect(second!.shedsPerSecond).toMatchObject({ queue_full: 4, rate_limited: 0 });
    expect(second).toMatchObject({ servedTpm: 900, quotaTpm: 2000, targetTpm: 1000, inFlight: 3 });
    expect(third!.admissionsPerSecond).toEqual({ interactive: 1, standard: 0, batch: 0 });
  });

  it('gives token shares over the window against weight-entitled shares of active tenants', async () => {
    const { clock, world, sampler } = harness();
    world.tenants.set('a', tenant('a', 1, 0));
    world.tenants.set('b', tenant('b', 3, 0));
    world.tenants.set('idle', tenant('idle', 5, 0));
    await sampler.sample();
    clock.now += 2000;
    world.tenants.set('a', tenant('a', 1, 300));
    world.tenants.set('b', tenant('b', 3, 100, 7));
    await sampler.sample();
    // The answer is what the OpenAPI document says it is.
    expect(() => ConsoleStateSchema(z.any()).strict().parse(sampler.state())).not.toThrow();
    const rows = Object.fromEntries(sampler.state().tenants.map((t) => [t.tenant, t]));
    expect(rows.a).toMatchObject({ tokenShare: 0.75, entitledShare: 0.25, tokensInWindow: 300 });
    expect(rows.b).toMatchObject({ tokenShare: 0.25, entitledShare: 0.75, queued: 7 });
    expect(rows.idle).toMatchObject({ tokenShare: 0, entitledShare: null });
  });

  it('keeps a bounded history, answers only newer samples, and shares one read among callers', async () => {
    const { clock, world, sampler } = harness();
    for (let i = 0; i < 20; i++) {
      clock.now += 2000;
      await sampler.sample();
    }
    const all = sampler.state().samples;
    expect(all).toHaveLength(6); // 10 s at 2 s, plus one
    expect(all.at(-1)!.seq).toBe(20);
    expect(sampler.state(18).samples.map((s) => s.seq)).toEqual([19, 20]);
    const before = world.statusCalls;
    await Promise.all(Array.from({ length: 50 }, () => sampler.sample()));
    expect(world.statusCalls - before).toBe(1);
  });

  it('reports a failed read and keeps the last good state', async () => {
    const { world, sampler } = harness();
    await sampler.sample();
    world.status = undefined as unknown as SchedulerStatus;
    (sampler as unknown as { o: { fleet: FleetPort } }).o.fleet.schedulerStatus = () =>
      Promise.reject(new Error('Temporal is down'));
    await sampler.sample();
    const st = sampler.state();
    expect(st.error).toMatch(/Temporal is down/);
    expect(st.status?.mode).toBe('open');
    expect(st.samples).toHaveLength(1);
  });

  it('stop() waits for a read in progress, which then leaves the closed store alone', async () => {
    const { world, sampler } = harness();
    let storeClosed = false;
    (sampler as unknown as { o: { tenants: () => string[] } }).o.tenants = () => {
      if (storeClosed) throw new Error('The database connection is not open');
      return [...world.tenants.keys()];
    };
    sampler.start();
    await sampler.stop(); // the first read was in flight: it finished before stop() returned
    expect(sampler.state().samples).toHaveLength(0);
    storeClosed = true;
    await sampler.sample(); // a late caller: no rejection, no read of the store
    expect(sampler.running).toBe(false);
    expect(sampler.state().error).toBeNull();
    expect(sampler.state().samples).toHaveLength(0);
  });

  it('reads the scheduler with two queries per interval, whatever the tenant count', async () => {
    const { clock, world, sampler } = harness();
    for (let i = 0; i < 50; i++) world.tenants.set(`t${i}`, tenant(`t${i}`, 1, 0));
    await sampler.sample();
    clock.now += 2000;
    await sampler.sample();
    expect(world.statusCalls).toBe(2);
    expect(world.tenantReads).toBe(2);
    expect(sampler.state().tenants).toHaveLength(50);
  });

  it('keeps a tenant whose read failed, with its last status, and catches its tokens up later', async () => {
    const { clock, world, sampler } = harness();
    world.tenants.set('a', tenant('a', 1, 0));
    await sampler.sample();
    const fleet = (
      sampler as unknown as { o: { fleet: { tenantStatuses: (ids: string[]) => Promise<unknown> } } }
    ).o.fleet;
    const real = fleet.tenantStatuses;
    fleet.tenantStatuses = () => Promise.reject(new Error('query timed out'));
    clock.now += 2000;
    world.tenants.set('a', tenant('a', 1, 500));
    await sampler.sample();
    expect(sampler.state().tenants.map((t) => t.tenant)).toEqual(['a']);
    expect(sampler.state().tenants[0]!.spent).toBe(0);
    fleet.tenantStatuses = real;
    clock.now += 2000;
    await sampler.sample();
    expect(sampler.state().tenants[0]).toMatchObject({ spent: 500, tokensInWindow: 500 });
  });
});

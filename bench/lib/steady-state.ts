import { performance } from 'node:perf_hooks';
import { DEFAULT_GOVERNOR, FleetScheduler, defaultTenantSettings } from '../../src/scheduler';
import type { Admission, UnitSubmission } from '../../src/scheduler';
import type { SimOptions } from './sim-options';
import type { SimTenants, SimUnits } from './sim-workload';
import { LANE_NAMES } from './sim-workload';

export interface SteadyState {
  queued: number;
  decisions: number;
  /** Admissions per second of wall time inside admit(), one admission per call. */
  admitPerSecond: number;
  /** Full cycles per second: release one, submit one, admit one. */
  cyclePerSecond: number;
}

/**
 * Holds the backlog at `queued` units (the same workload mix) and times single
 * decisions: each cycle completes the oldest running unit, submits a new one and
 * admits one. This is the decision cost at that depth, free of simulator overhead.
 */
export function measureSteadyState(
  o: SimOptions,
  tenants: SimTenants,
  u: SimUnits,
  queued: number,
  decisions: number,
): SteadyState {
  const T0 = Date.UTC(2025, 0, 1);
  const core = FleetScheduler.create(
    {
      settings: {
        concurrency: o.concurrency,
        floors: { standard: 0.1, batch: 0.05 },
        leaseTtlSeconds: 3600,
        globalMaxQueued: queued * 2,
      },
      governor: {
        ...DEFAULT_GOVERNOR,
        maxConcurrency: o.concurrency,
        initialTokensPerMinute: 1e15,
        maxTokensPerMinute: 1e15,
      },
    },
    T0,
  );
  for (let t = 0; t < o.tenants; t++) {
    core.upsertTenant(
      `tenant-${t}`,
      defaultTenantSettings({
        weight: tenants.weights[t]!,
        maxQueued: queued,
        maxInFlight: tenants.maxInFlight[t]!,
      }),
      T0,
    );
  }
  let next = 0;
  const unit = (): UnitSubmission => {
    const i = next++ % u.tenant.length;
    return {
      runId: `s${next}`,
      tenant: `tenant-${u.tenant[i]!}`,
      priority: LANE_NAMES[u.lane[i]!]!,
      cost: u.cost[i]!,
    };
  };
  const running: Admission[] = [];
  const fill: UnitSubmission[] = [];
  while (next < queued + o.concurrency) fill.push(unit());
  core.submit(fill, T0);
  running.push(...core.admit(T0));

  let admitMs = 0;
  const start = performance.now();
  let done = 0;
  for (let k = 0; k < decisions; k++) {
    const now = T0 + 1 + k;
    const old = running.shift();
    if (old)
      core.release(
        [{ runId: old.runId, attempt: old.attempt, usedTokens: old.reserved, outcome: 'completed' }],
        now,
      );
    core.submit([unit()], now);
    const t0 = performance.now();
    const adm = core.admit(now, 1);
    admitMs += performance.now() - t0;
    done += adm.length;
    running.push(...adm);
  }
  const totalMs = performance.now() - start;
  return {
    queued: core.status(T0).queued.total,
    decisions: done,
    admitPerSecond: done / (admitMs / 1000),
    cyclePerSecond: decisions / (totalMs / 1000),
  };
}

import { MAX_GLOBAL_QUEUED } from '../../../src/scheduler/limits';
import { DEFAULT_GOVERNOR, FleetScheduler, defaultTenantSettings } from '../../../src/scheduler';
import type {
  Admission,
  FleetSettings,
  GovernorParams,
  Priority,
  TenantSettings,
  UnitSubmission,
} from '../../../src/scheduler';

export const T0 = Date.UTC(2025, 0, 15, 10, 0, 0);

export function fleetSettings(over: Partial<FleetSettings> = {}): FleetSettings {
  return {
    concurrency: 50,
    floors: { standard: 0.1, batch: 0.05 },
    leaseTtlSeconds: 60,
    globalMaxQueued: MAX_GLOBAL_QUEUED,
    ...over,
  };
}

/** A governor that never binds unless a test says so. */
export function openGovernor(over: Partial<GovernorParams> = {}): GovernorParams {
  return { ...DEFAULT_GOVERNOR, initialTokensPerMinute: 1e12, maxTokensPerMinute: 1e12, ...over };
}

export function makeFleet(
  opts: {
    settings?: Partial<FleetSettings>;
    governor?: Partial<GovernorParams>;
    tenants?: Record<string, Partial<TenantSettings>>;
    endedMemory?: number;
  } = {},
): FleetScheduler {
  const s = FleetScheduler.create(
    {
      settings: fleetSettings(opts.settings),
      governor: openGovernor(opts.governor),
      ...(opts.endedMemory === undefined ? {} : { endedMemory: opts.endedMemory }),
    },
    T0,
  );
  for (const [id, over] of Object.entries(opts.tenants ?? {}))
    s.upsertTenant(id, defaultTenantSettings(over), T0);
  return s;
}

export function units(
  tenant: string,
  n: number,
  priority: Priority = 'standard',
  cost = 100,
  from = 0,
): UnitSubmission[] {
  return Array.from({ length: n }, (_, i) => ({
    runId: `${tenant}-${priority}-${from + i}`,
    tenant,
    priority,
    cost,
  }));
}

/**
 * Runs the fleet as a closed loop: each step releases the oldest in-flight unit
 * (completed, using its estimate) and admits what fits. Keeps its in-flight list
 * across calls, so a test can change the workload between runs.
 */
export class Loop {
  readonly inFlight: Admission[] = [];
  constructor(private readonly s: FleetScheduler) {}

  /** Returns the admissions of this run, in decision order. */
  run(steps: number, now = T0, onAdmit?: (a: Admission) => void): Admission[] {
    const all: Admission[] = [];
    const take = (as: Admission[]) => {
      for (const a of as) {
        onAdmit?.(a);
        all.push(a);
        this.inFlight.push(a);
      }
    };
    take(this.s.admit(now));
    for (let i = 0; i < steps; i++) {
      const done = this.inFlight.shift();
      if (!done) break;
      this.s.release(
        [{ runId: done.runId, attempt: done.attempt, usedTokens: done.reserved, outcome: 'completed' }],
        now,
      );
      take(this.s.admit(now));
    }
    return all;
  }
}

/** A fresh loop run for `steps` steps. */
export function churn(
  s: FleetScheduler,
  steps: number,
  now = T0,
  onAdmit?: (a: Admission) => void,
): Admission[] {
  return new Loop(s).run(steps, now, onAdmit);
}

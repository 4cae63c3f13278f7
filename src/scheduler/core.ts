import { LaneQueue } from './fair-queue';
import { newGovernor } from './governor';
import type { GovernorState } from './governor';
import { LeaseTable } from './leases';
import { EndedRuns, MAX_ENDED_RUNS } from './ended';
import { LedgerLog } from './ledger-log';
import { ChargeKeys, FencedOwners } from './charge-keys';
import type { Linger, QueuedUnit, TenantState } from './queue-state';
import { newRate } from './rate';
import type { RateState } from './rate';
import type { FleetSettings, GovernorParams } from './types';

import { zeroCounters } from './counters';
import type { Counters } from './counters';

export type { Counters };

export type Intake = 'open' | 'refuse' | 'hold';

/** Everything the scheduler knows. The helpers in this folder are functions over it; the facade owns it. */
export interface CoreState {
  settings: FleetSettings;
  governorParams: GovernorParams;
  /** The default model pool's governor (`pools.ts`). */
  governor: GovernorState;
  /** Named model pools' governors, by name (`pools.ts`; at most MAX_POOLS). */
  pools: Map<string, GovernorState>;
  tenants: Map<string, TenantState>;
  nextOrd: number;
  lanes: [LaneQueue, LaneQueue, LaneQueue];
  /** Floor credits of the standard and batch lanes (index 1 and 2; index 0 unused). */
  credits: [number, number, number];
  queued: Map<string, QueuedUnit>;
  queuedCost: number;
  leases: LeaseTable;
  /** Tenants with a backlogged flow withheld by its budget, woken when their period rolls over. */
  budgetParked: Set<TenantState>;
  /** Lower bound of the earliest period end among budgetParked (may be stale-low; only triggers a scan). */
  budgetWakeAt: number;
  seq: number;
  counters: Counters;
  intake: Intake;
  draining: boolean;
  fleetRate: RateState;
  log: LedgerLog;
  /** Recently ended runs and attempts (bounded): a late or repeated message cannot revive them. */
  ended: EndedRuns;
  /** Call keys charged and not yet confirmed settled by their owner: a repeat is not charged again. */
  chargeKeys: ChargeKeys;
  /** Owners whose calls a sweep took over: their own charges are not booked (`charge-keys.ts`). */
  fencedOwners: FencedOwners;
  /** Reservations of expired leases kept for their calls still under way, by tenant id (`lingers.ts`). */
  lingers: Map<string, Linger>;
  /**
   * When this chain began recovering its ledger (it may be behind: started fresh after a loss, or
   * reset), or null. Meanwhile tenants created are `held` too (`recovery.ts`).
   */
  recoverySince: number | null;
  /**
   * Per model pool, the unit of that pool passed over longest because it did not fit the pool's
   * token bucket or tokens in flight, and since when (`pass-over.ts`); a pool with none is absent.
   */
  passedOver: Map<string, { runId: string; since: number }>;
  /** Tenants whose queued units may exceed what their budget can still cover (checked by `refuseUncoverable`). */
  overBudget: Set<TenantState>;
  /** Each named pool's governor parameters, derived from `governorParams` once (`paramsOf`); not in the snapshot. */
  poolParams?: Map<string, GovernorParams>;
}

/** An empty, open fleet. */
export function newCoreState(
  settings: FleetSettings,
  governor: GovernorParams,
  now: number,
  endedMemory = MAX_ENDED_RUNS,
): CoreState {
  return {
    settings,
    governorParams: { ...governor },
    governor: newGovernor(governor, now),
    pools: new Map(),
    tenants: new Map(),
    nextOrd: 0,
    lanes: [new LaneQueue(0), new LaneQueue(1), new LaneQueue(2)],
    credits: [0, 0, 0],
    queued: new Map(),
    queuedCost: 0,
    leases: new LeaseTable(),
    budgetParked: new Set(),
    budgetWakeAt: Infinity,
    seq: 0,
    counters: zeroCounters(),
    intake: 'open',
    draining: false,
    fleetRate: newRate(now),
    log: new LedgerLog(),
    ended: new EndedRuns(endedMemory),
    chargeKeys: new ChargeKeys(),
    fencedOwners: new FencedOwners(),
    lingers: new Map(),
    recoverySince: null,
    passedOver: new Map(),
    overBudget: new Set(),
  };
}

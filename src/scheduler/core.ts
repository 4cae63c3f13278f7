import type { LaneQueue } from './fair-queue';
import type { GovernorState } from './governor';
import type { LeaseTable } from './leases';
import type { LedgerLog } from './ledger-log';
import type { QueuedUnit, TenantState } from './model';
import type { RateState } from './rate';
import type { FleetSettings, GovernorParams } from './types';

export interface Counters {
  submitted: number;
  admitted: number;
  completed: number;
  failed: number;
  cancelled: number;
  shed: number;
  expired: number;
}

export type Intake = 'open' | 'refuse' | 'hold';

/** Everything the scheduler knows. The helpers in this folder are functions over it; the facade owns it. */
export interface CoreState {
  settings: FleetSettings;
  governorParams: GovernorParams;
  governor: GovernorState;
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
}

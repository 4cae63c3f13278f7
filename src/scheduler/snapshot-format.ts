import type { Counters, Intake } from './core';
import type { GovernorState } from './governor';
import type { LedgerLogSnapshot } from './ledger-log';
import type { Lane } from './queue-state';
import type { RateState } from './rate';
import type { FleetSettings, GovernorParams, TenantSettings } from './types';

/** A tenant's queue in one lane, FIFO: run ids, costs, and attempts (empty when all are 0). */
export type QueueTuple = [string[], number[], number[]];
/** [periodStart, periodEnd, reserved, spent] */
export type LedgerTuple = [number, number | null, number, number];
/**
 * [runId, tenant ord, lane, attempt, seq, admittedAt, expiresAt, reserved, used, charged, perCall]
 * (the last two absent in snapshots written before per-call charging: 0 and 0).
 */
export type LeaseTuple = [
  string,
  number,
  Lane,
  number,
  number,
  number,
  number,
  number,
  number,
  number?,
  (0 | 1)?,
];

export interface TenantSnapshot {
  id: string;
  ord: number;
  settings: TenantSettings;
  ledger: LedgerTuple;
  rate: RateState;
  /** Fair-queuing tags per lane. */
  tags: [number, number, number];
  /** Omitted when nothing is queued. */
  queues?: [QueueTuple, QueueTuple, QueueTuple];
}

/**
 * The scheduler as plain JSON, for continue-as-new. Parked/heap membership is not
 * stored: it is a function of the rest and is rebuilt. Cancelled units (tombstones)
 * are dropped. `restore(snapshot())` decides exactly as the original would.
 */
export interface SchedulerSnapshot {
  v: 1;
  settings: FleetSettings;
  governorParams: GovernorParams;
  governor: GovernorState;
  seq: number;
  counters: Counters;
  intake: Intake;
  draining: boolean;
  vtime: [number, number, number];
  credits: [number, number, number];
  fleetRate: RateState;
  nextOrd: number;
  tenants: TenantSnapshot[];
  leases: LeaseTuple[];
  log: LedgerLogSnapshot;
}

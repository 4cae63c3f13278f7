import type { Counters, Intake } from './core';
import type { EndedTuple } from './ended';
import type { GovernorState } from './governor';
import type { LedgerLogSnapshot } from './ledger-log';
import type { Lane } from './queue-state';
import type { RateState } from './rate';
import type { FleetSettings, GovernorParams, TenantSettings } from './types';

/**
 * A tenant's queue in one lane, key by key and FIFO within a key: run ids, costs, and attempts
 * (empty when all are 0), then the units' model pools (indices into `SnapshotFleet.pools` from 1, 0
 * the default; absent or empty when all are in the default pool), then their key slots (absent when
 * all are under the default key '').
 */
export type QueueTuple =
  | [string[], number[], number[]]
  | [string[], number[], number[], number[]]
  | [string[], number[], number[], number[], string[]];
/**
 * A flow's fairness-key state (`key-queue.ts`): its key-level virtual time and its backlogged slots
 * (stored names, `storedName`) with their tags, in the order the flow made them. 0 when the flow
 * uses no key but the default.
 */
export type KeysTuple = [number, string[], number[]] | 0;
/**
 * [periodStart, periodEnd, reserved, spent], then, while the tenant has a lingering reservation
 * (`lingers.ts`, included in `reserved`), its tokens and its end (absent in older snapshots: none).
 */
export type LedgerTuple =
  [number, number | null, number, number] | [number, number | null, number, number, number, number];
/**
 * [runId, tenant ord, lane, attempt, seq, admittedAt, expiresAt, reserved, used, charged, perCall,
 * pool] (charged and perCall absent in snapshots written before per-call charging: 0 and 0; pool,
 * an index into `SnapshotFleet.pools` from 1, absent for the default pool).
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
  number?,
];

export interface TenantSnapshot {
  id: string;
  ord: number;
  settings: TenantSettings;
  ledger: LedgerTuple;
  rate: RateState;
  /** When the tenant was last seen (absent: `rate.at`). */
  seen?: number;
  /** Fair-queuing tags per lane. */
  tags: [number, number, number];
  /** Omitted when nothing is queued. */
  queues?: [QueueTuple, QueueTuple, QueueTuple];
  /** Fairness-key state per lane; omitted when nothing is queued or no flow uses a key. */
  keys?: [KeysTuple, KeysTuple, KeysTuple];
}

/** The fleet-wide part of the snapshot, the same in every version. */
export interface SnapshotFleet {
  settings: FleetSettings;
  governorParams: GovernorParams;
  governor: GovernorState;
  /** Named model pools and their governors (`pools.ts`); absent when none is in use. */
  pools?: [string, GovernorState][];
  seq: number;
  counters: Counters;
  intake: Intake;
  draining: boolean;
  vtime: [number, number, number];
  credits: [number, number, number];
  fleetRate: RateState;
  nextOrd: number;
  /**
   * When the chain began recovering its ledger (absent: not recovering). A chain
   * restored while recovering holds every tenant again until its next floor (a bounded snapshot
   * keeps no per-tenant flag).
   */
  recoverySince?: number;
  /** Call keys charged and not yet confirmed settled (`charge-keys.ts`), joined by " " (absent: none). */
  chargeKeys?: string;
  /** Fenced call charges owners (`charge-keys.ts`), oldest first, joined by " " (absent: none). */
  fencedOwners?: string;
  /** [runId, since] of the unit passed over longest (absent: none, or older code). */
  passedOver?: [string, number];
  /** Named model pools' pass-over records: [pool, runId, since] (absent when none). */
  passedOverPools?: [string, string, number][];
}

/**
 * The scheduler as plain JSON (objects per tenant, run ids in full): what the snapshot code works
 * from, never stored; a snapshot is encoded from it and decoded into it. Parked/heap membership is
 * not stored: it is a function of the rest and is rebuilt. Cancelled units (tombstones) are dropped.
 */
export interface PlainSnapshot extends SnapshotFleet {
  tenants: TenantSnapshot[];
  leases: LeaseTuple[];
  log: LedgerLogSnapshot;
  /** Recently ended runs (absent in snapshots from before it existed). */
  ended?: EndedTuple[];
}

/**
 * [weight, maxQueued, maxInFlight, budget tokens, budget period, 1 when `onBudgetExhausted` is `park`
 * (0 when not, if key weights follow), key weights]
 */
export type SettingsTuple = [
  number,
  number,
  number,
  number | null,
  TenantSettings['budget']['period'],
  (0 | 1)?,
  Record<string, number>?,
];
/** [count, at, since?] with times relative to t0 */
export type RateTuple = [number, number] | [number, number, number];

/**
 * [id, ord, settings, ledger (times relative to t0), rate, fair-queuing tags per lane, last seen
 *  (relative to t0), queues per lane (omitted when nothing is queued), in version 2 only and only
 *  while some flow uses a key its key slots per lane]. Queues and key slots are packed as
 *  `snapshot-queues.ts` describes.
 */
export type TenantTuple = [
  string,
  number,
  SettingsTuple,
  LedgerTuple,
  RateTuple,
  [number, number, number],
  number,
  [string, string, string]?,
  [string, string, string]?,
];

/**
 * Version 2, what earlier code wrote and `restore()` still reads: the plain state, encoded compactly so that it has
 * a hard bound (see `limits.ts`): tuples instead of objects, run ids coded against their tenant,
 * integers in base 36 inside packed strings, times relative to `t0`. Still plain, readable JSON.
 */
export interface SchedulerSnapshotV2 extends SnapshotFleet {
  v: 2;
  /** ms since epoch; tenant, lease and log times are stored relative to it. */
  t0: number;
  tenants: TenantTuple[];
  /**
   * Leases joined by ";", each "tenant-index lane code attempt seq admittedAt expiresAt reserved used
   * charged perCall"
   * (tenant-index into `tenants`, numbers in base 36, times relative to t0).
   */
  leases: string;
  /**
   * Ledger log: `next`, and per tenant (index into `tenants`, or its id when it left the core) its
   * entries joined by ";", each "seq-delta at kind-code tokens run-code" (base 36, at relative to t0).
   */
  log: { next: number; rings: [number | string, string][] };
  /**
   * Recently ended runs joined by ";", each "tenant-index code attempt final charged": an index into
   * `tenants` (base 36; runs of tenants that left the core are not kept), the run id coded
   * against that tenant, numbers in base 36. Absent in snapshots from before it existed.
   */
  ended?: string;
}

/**
 * Version 3, what `snapshot()` writes: version 2 with its numbers in base 64 (`snapshot-numbers.ts`),
 * its queues' key slots marked in line and no key slots apart (`snapshot-queues.ts`, element 8 of a
 * tenant tuple absent).
 */
export interface SchedulerSnapshotV3 extends Omit<SchedulerSnapshotV2, 'v'> {
  v: 3;
}

/** What `snapshot()` writes (version 3) and `restore()` reads (versions 2 and 3). */
export type SchedulerSnapshot = SchedulerSnapshotV2 | SchedulerSnapshotV3;

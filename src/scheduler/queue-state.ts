import type { KeyedQueue } from './key-queue';
import type { LedgerState } from './ledger';
import type { RateState } from './rate';
import type { TenantSettings } from './types';

/** Lane index: 0 interactive, 1 standard, 2 batch (the order of PRIORITIES). */
export type Lane = 0 | 1 | 2;

/** A queued unit. `live` turns false on cancel: the FIFO keeps it as a tombstone until it reaches the head. */
export interface QueuedUnit {
  runId: string;
  tenant: TenantState;
  lane: Lane;
  cost: number;
  attempt: number;
  live: boolean;
  /** The model pool its calls go to (`pools.ts`; '' the default). */
  pool: string;
  /** Its fairness key inside the tenant ('' the tenant's default key). */
  key: string;
  /** The key slot it is queued in (`key-queue.ts`): its key, or a bucket `#n` past the bound. */
  slot: string;
}

/**
 * One tenant's units in one lane: its start-time fair queuing tag among tenants, and its units
 * grouped by fairness key (`key-queue.ts`). `units[head]` is the head unit: the next unit of the key
 * served next.
 */
export interface Flow {
  tenant: TenantState;
  lane: Lane;
  /** Virtual start tag of the head unit while backlogged; the last finish tag otherwise. */
  tag: number;
  readonly keys: KeyedQueue<QueuedUnit>;
  /** The FIFO of the key served next (empty while nothing is queued). */
  readonly units: readonly QueuedUnit[];
  /** Index of the head in `units`; entries before it are consumed. */
  readonly head: number;
  /** Live (non-tombstone) units over all keys. */
  readonly live: number;
  /** Slot in the lane's heap; -1 while idle or parked. */
  hi: number;
  /**
   * Set only inside one admission round: its head did not fit and the round passed over it (out of
   * the heap until the round ends).
   */
  passed?: boolean;
}

export interface TenantState {
  id: string;
  /** Creation order, the tie-break of equal tags. */
  ord: number;
  settings: TenantSettings;
  flows: [Flow, Flow, Flow];
  inFlight: number;
  queued: number;
  queuedCost: number;
  ledger: LedgerState;
  rate: RateState;
  /** Last time the tenant submitted anything (accepted or shed) or had a unit admitted. */
  seenAt: number;
  /**
   * Its `spent` may be behind (the chain is recovering and no usage floor has landed for it yet):
   * with a budget it admits nothing until one does (`recovery.ts`).
   */
  held?: boolean;
}

export interface Lease {
  runId: string;
  tenant: TenantState;
  lane: Lane;
  attempt: number;
  seq: number;
  admittedAt: number;
  expiresAt: number;
  /** Tokens reserved in the ledger for this lease (the estimate at admission, plus granted top-ups). */
  reserved: number;
  /** Usage the run reported in renewals (the legacy charge of an expiry). */
  used: number;
  /** Tokens charged call by call while this lease held (they consume the reservation first). */
  charged: number;
  /** Its calls are charged one by one: releases and expiries charge nothing more. */
  perCall: boolean;
  hi: number;
  /** The model pool its calls go to (`pools.ts`; '' the default). */
  pool: string;
}

/** A budgeted tenant's lingering reservation of expired leases (`lingers.ts`). */
export interface Linger {
  tenant: TenantState;
  tokens: number;
  until: number;
}

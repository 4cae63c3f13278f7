import { admit } from './admission';
import { submitAdmittingNow } from './admit-now';
import type { AdmitNowOptions, SubmitAnswer } from './admit-now';
import { newCoreState } from './core';
import type { CoreState } from './core';
import { checkBatch, submit } from './door';
import { refreshTenant } from './eligibility';
import { explain } from './explain';
import { FALLBACK_FLEET_SETTINGS, sanitizeFleet } from './fleet-settings';
import type { SettingsPatch } from './fleet-settings';
import { observe } from './governor';
import { governorOf, paramsOf, poolFor } from './pools';
import { cancel, charge, expireLeases, release, renew, topUp } from './lease-lifecycle';
import {
  beginRecovery,
  holdWindowMs,
  floorSpent,
  needsFloor,
  recoveryWindows,
  refuseUncoverable,
} from './recovery';
import type { BudgetRefusal } from './recovery';
import { fromSnapshot, toSnapshot } from './snapshot';
import type { SchedulerSnapshot } from './snapshot-format';
import { fleetStatus, fleetSummary, tenantStatus } from './status';
import type { FleetSummary } from './status';
import { MAX_CORE_TENANTS, TENANT_IDLE_EVICT_MS } from './limits';
import { applySettings, createTenant, evictIdle, sanitizeSettings, touchLedger } from './tenants';
import type {
  Admission,
  Charge,
  FleetSettings,
  GovernorParams,
  LedgerEntry,
  ModelObservation,
  Refusal,
  Release,
  Renewal,
  SchedulerStatus,
  SubmitResult,
  TenantSettings,
  TenantStatus,
  TopUpResult,
  UnitSubmission,
  WaitingOn,
} from './types';
import { nextWakeAt } from './wake';

export interface SchedulerInit {
  settings: FleetSettings;
  governor: GovernorParams;
  /** How many ended runs the core remembers (default `MAX_ENDED_RUNS`; tests make it tiny). */
  endedMemory?: number;
}

/**
 * The fleet's policy core: lanes with floors, weighted fair queuing across tenants,
 * admission limits, the token governor, budget ledger, leases and the drain switch.
 * Pure and deterministic: time is always passed in (`now`, ms since epoch), nothing
 * throws on bad input, and `snapshot()` is JSON that `restore()` turns back into a
 * scheduler that decides identically. Read methods (status, explain, nextWakeAt, …)
 * never change state, so they are safe in Temporal queries.
 */
export class FleetScheduler {
  private constructor(private readonly s: CoreState) {}

  static create(init: SchedulerInit, now: number): FleetScheduler {
    return new FleetScheduler(
      newCoreState(
        sanitizeFleet(FALLBACK_FLEET_SETTINGS, init.settings),
        init.governor,
        now,
        init.endedMemory,
      ),
    );
  }

  static restore(snapshot: SchedulerSnapshot, opts: { endedMemory?: number } = {}): FleetScheduler {
    return new FleetScheduler(fromSnapshot(snapshot, opts.endedMemory));
  }

  snapshot(): SchedulerSnapshot {
    return toSnapshot(this.s);
  }

  /**
   * Creates a tenant or changes its settings (a budget period change keeps what was spent). When
   * the core already holds MAX_CORE_TENANTS, the idlest idle tenant makes room; when none is idle
   * the new tenant is not created (false), and its submissions answer unknown_tenant until room frees.
   */
  upsertTenant(id: string, settings: TenantSettings, now: number): boolean {
    const clean = sanitizeSettings(settings);
    const t = this.s.tenants.get(id);
    if (t) {
      touchLedger(this.s, t, now);
      applySettings(t, clean, now);
      refreshTenant(this.s, t);
      return true;
    }
    if (this.s.tenants.size >= MAX_CORE_TENANTS) {
      evictIdle(this.s, now, 0, this.s.tenants.size - MAX_CORE_TENANTS + 1);
      if (this.s.tenants.size >= MAX_CORE_TENANTS) return false;
    }
    const created = createTenant(id, this.s.nextOrd++, clean, now);
    // A tenant that (re)appears while the chain recovers may have spent in the lost chain: held too.
    const since = this.s.recoverySince;
    if (since !== null && now < since + holdWindowMs(this.s)) created.held = true;
    this.s.tenants.set(id, created);
    return true;
  }

  /**
   * Idle tenants (nothing queued, in flight or spent against a budget this period, no admission for
   * `idleMs`) leave the core; returns their ids. The scheduler calls this before continue-as-new.
   */
  evictIdle(now: number, idleMs = TENANT_IDLE_EVICT_MS): string[] {
    return evictIdle(this.s, now, idleMs);
  }

  tenantCount(): number {
    return this.s.tenants.size;
  }

  tenantStatus(id: string, now: number): TenantStatus | undefined {
    return tenantStatus(this.s, id, now);
  }

  /** Door checks and queueing; one result per unit, in order. */
  submit(units: UnitSubmission[], now: number): SubmitResult[] {
    return submit(this.s, units, now);
  }

  /**
   * Submits, and admits at once the `admitNow` units the fair order admits now (`admit-now.ts`); the
   * round's other admissions are returned for the caller to tell their runs.
   */
  submitAdmittingNow(units: UnitSubmission[], now: number, opts: AdmitNowOptions = {}): SubmitAnswer {
    return submitAdmittingNow(this.s, units, now, opts);
  }

  /**
   * Whether a batch of `items` units of `costPerItem` tokens fits the door now, all or nothing: null,
   * or the batch's one refusal. Read-only (safe in a query); it reserves nothing.
   */
  checkBatch(tenant: string, items: number, costPerItem: number, now: number): Refusal | null {
    return checkBatch(this.s, tenant, items, costPerItem, now);
  }

  /** Admits as many units as the limits allow at `now` (at most `max`), in decision order. */
  admit(now: number, max = Infinity): Admission[] {
    return admit(this.s, now, max);
  }

  renew(renewals: Renewal[], now: number): void {
    renew(this.s, renewals, now);
  }

  /** Idempotent: unknown runs and stale attempts are ignored. */
  release(releases: Release[], now: number): void {
    release(this.s, releases, now);
  }

  /** Books what the provider billed, and corrections of provisional charges; once per call key. */
  charge(charges: Charge[], now: number): void {
    charge(this.s, charges, now);
  }

  /** The owner settled these charge ids durably (`chargeId`): they can no longer come again. */
  forgetCharges(ids: readonly string[]): void {
    this.s.chargeKeys.forget(ids);
  }

  /** A sweep took these owners' calls over (`ownerId`): charges they still send are not booked. */
  fenceOwners(ids: readonly string[]): void {
    this.s.fencedOwners.fence(ids);
  }

  /** A running unit asks for `tokens` more reservation; granted only within its tenant's budget. */
  topUp(runId: string, attempt: number, tokens: number, now: number): TopUpResult {
    return topUp(this.s, runId, attempt, tokens, now);
  }

  /** Removes queued units and returns their ids; in-flight units are released by their runs. */
  cancel(runIds: string[], _now: number): string[] {
    return cancel(this.s, runIds);
  }

  /** Ends leases that ran out by `now`; returns them as they were admitted. */
  expireLeases(now: number): Admission[] {
    return expireLeases(this.s, now);
  }

  /** Feeds model-plane observations (worker reports) to their model pools' governors (`pools.ts`). */
  observe(obs: ModelObservation[], now: number): void {
    const byPool = new Map<string, ModelObservation[]>();
    for (const o of obs) {
      const pool = poolFor(this.s, o.pool, now);
      const list = byPool.get(pool);
      if (list) list.push(o);
      else byPool.set(pool, [o]);
    }
    for (const [pool, list] of byPool)
      observe(governorOf(this.s, pool), paramsOf(this.s, pool), list, now, this.s.leases.inPool(pool));
    for (const o of obs) {
      this.s.counters.modelCalls += Math.max(0, o.calls);
      this.s.counters.throttled += Math.max(0, o.throttled);
    }
  }

  patchSettings(patch: SettingsPatch): void {
    this.s.settings = sanitizeFleet(this.s.settings, patch);
  }

  /** Stops admitting; intake 'refuse' sheds new work at the door, 'hold' queues it. */
  drain(intake: 'refuse' | 'hold', _now: number): void {
    this.s.draining = true;
    this.s.intake = intake === 'hold' ? 'hold' : 'refuse';
  }

  resume(_now: number): void {
    this.s.draining = false;
    this.s.intake = 'open';
  }

  explain(runId: string, now: number): WaitingOn | null {
    return explain(this.s, runId, now);
  }

  status(now: number): Omit<SchedulerStatus, 'history'> {
    return fleetStatus(this.s, now);
  }

  /** The head figures of `status`, without walking tenants (the scheduler loop's summary line). */
  summary(now: number): FleetSummary {
    return fleetSummary(this.s, now);
  }

  nextWakeAt(now: number): number | null {
    return nextWakeAt(this.s, now);
  }

  /** Most recent first. */
  ledgerEntries(tenant: string, limit: number): LedgerEntry[] {
    return this.s.log.entries(tenant, Math.max(0, limit));
  }

  /** Each tenant's current period start (what `floorSpent` figures must be counted from). */
  recoveryWindows(now: number): { tenant: string; periodStart: number }[] {
    return recoveryWindows(this.s, now);
  }

  /**
   * Raises tenants' `spent` to usage recovered from finished runs (after a lost or reset chain); a
   * tenant in the figures is no longer held. `requestedAt`: when the figures were asked for (a floor
   * asked for after the recovery's hold window ends the recovery).
   */
  floorSpent(
    recovered: { tenant: string; periodStart: number; tokens: number }[],
    now: number,
    requestedAt?: number,
    /** No run workflow was open past admission when the floor looked: none of a lost chain can come back. */
    quiet = false,
    /** Only while recovering: a floor landing after the recovery ended changes nothing. */
    onlyWhileRecovering = false,
  ): void {
    if (onlyWhileRecovering && this.s.recoverySince === null) return;
    floorSpent(this.s, recovered, now, requestedAt, quiet);
  }

  /**
   * The chain may be behind its lost or reset past: tenants with a budget admit nothing until a usage
   * floor covering them lands (`floorSpent`); tenants without one keep admitting. No-op while a
   * recovery is under way.
   */
  beginRecovery(now: number): void {
    beginRecovery(this.s, now);
  }

  /** When the current recovery began, or null. */
  recoverySince(): number | null {
    return this.s.recoverySince;
  }

  /** Whether some tenant is held until a usage floor lands. */
  needsFloor(): boolean {
    return needsFloor(this.s);
  }

  /** Queued units their tenant's budget can no longer cover, taken out of the queue (their runs fail). */
  refuseUncoverable(now: number): BudgetRefusal[] {
    return refuseUncoverable(this.s, now);
  }

  /** The lease length in force (the recovery's follow-up floors are spaced by it). */
  leaseTtlSeconds(): number {
    return this.s.settings.leaseTtlSeconds;
  }

  /** How long a recovery holds budgeted tenants at least (a floor asked for after it lifts the hold). */
  recoveryHoldMs(): number {
    return holdWindowMs(this.s);
  }

  /** Queued or in flight. */
  isKnown(runId: string): boolean {
    return this.s.queued.has(runId) || this.s.leases.get(runId) !== undefined;
  }
}

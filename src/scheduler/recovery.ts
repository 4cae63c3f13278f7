import type { CoreState } from './core';
import { mayBeUncoverable, refreshTenant } from './eligibility';
import { liveUnits, tombstone } from './fair-queue';
import { finiteSum } from './ledger';
import type { QueuedUnit, TenantState } from './queue-state';
import { touchLedger } from './tenants';

/**
 * The least a recovery holds budgeted tenants: the API re-sends its tenants to a new chain within
 * seconds (its watchdog, or a submission that met `unknown_tenant`), and a tenant that had spent in
 * the lost chain must not admit before a floor counted it.
 */
export const RECOVERY_HOLD_WINDOW_MS = 30_000;

/**
 * How long a recovery holds (at least one lease TTL): by then every run that was in flight when the
 * chain was lost has come back to it (a renewal adopts it, a retry offers it, with what it used) or
 * has closed (the floor counts it), so the floor taken then is what the lost ledger held.
 */
export function holdWindowMs(s: CoreState): number {
  return Math.max(RECOVERY_HOLD_WINDOW_MS, s.settings.leaseTtlSeconds * 1000);
}

/**
 * The chain may be behind (started fresh after a loss, or reset): every tenant is held (with a
 * budget it admits nothing) until a usage floor asked for after the hold window (`holdWindowMs`)
 * covers it, and so is every tenant that appears within the window. Tenants without a budget keep
 * admitting. A recovery already under way is not begun again (its holds stand).
 */
export function beginRecovery(s: CoreState, now: number): void {
  if (s.recoverySince !== null) return;
  s.recoverySince = now;
  for (const t of s.tenants.values()) {
    t.held = true;
    refreshTenant(s, t);
  }
}

/** Whether some tenant waits for a floor (the scheduler asks for one after the window, and when one lands). */
export function needsFloor(s: CoreState): boolean {
  if (s.recoverySince === null) return false;
  for (const t of s.tenants.values()) if (t.held) return true;
  return false;
}

/**
 * Each tenant's current budget period: where recovered usage is counted from. A period that never
 * ends (`none`: no budget) is counted from the beginning (0), not from the moment this chain created
 * the ledger: after a loss that moment is the recovery itself, and a floor counted from it would miss
 * every run that finished before.
 */
export function recoveryWindows(s: CoreState, now: number): { tenant: string; periodStart: number }[] {
  const out: { tenant: string; periodStart: number }[] = [];
  for (const t of s.tenants.values()) {
    if (touchLedger(s, t, now)) refreshTenant(s, t);
    out.push({
      tenant: t.id,
      periodStart: t.ledger.period === 'none' ? 0 : t.ledger.periodStart,
    });
  }
  return out;
}

/**
 * Raises `spent` to the usage recovered from finished runs (after the chain was lost or reset). A
 * floor, never a sum: what the ledger already settled and what is recovered describe the same runs,
 * so the larger is still no more than was used. Figures for another period than the current are
 * ignored (the period rolled meanwhile).
 */
export function floorSpent(
  s: CoreState,
  recovered: readonly { tenant: string; periodStart: number; tokens: number }[],
  now: number,
  requestedAt?: number,
  /**
   * No run workflow was open past its admission when the floor looked: every run a lost chain had
   * admitted has closed and is in the figures (a queued one carries its usage when it offers itself
   * again), so the floor ends the recovery whenever it was asked for (a first start, a loss while
   * nothing ran) instead of after the hold window.
   */
  quiet = false,
): void {
  const since = s.recoverySince ?? -Infinity;
  const final = requestedAt !== undefined && (quiet || requestedAt >= since + holdWindowMs(s));
  for (const r of recovered) {
    const t = s.tenants.get(r.tenant);
    if (!t || !Number.isFinite(r.tokens)) continue;
    if (touchLedger(s, t, now)) refreshTenant(s, t);
    const window = t.ledger.period === 'none' && r.periodStart === 0 ? 0 : t.ledger.periodStart;
    if (window !== r.periodStart) continue;
    // Floored after the hold window (every run of the lost chain is back or closed): what it admits
    // from now on is counted against it.
    if (t.held && final) {
      t.held = false;
      refreshTenant(s, t);
    }
    if (r.tokens <= t.ledger.spent) continue;
    const extra = Math.ceil(r.tokens) - t.ledger.spent;
    t.ledger.spent = finiteSum(t.ledger.spent, extra);
    s.log.append(t.id, now, '(recovered)', 'settle', extra);
    refreshTenant(s, t);
  }
  // The recovery ends with a floor asked for after its window, when nothing is held any more.
  if (s.recoverySince !== null && final && !needsFloor(s)) s.recoverySince = null;
}

/** A queued unit its tenant's budget can no longer cover: the run ends with `budget_exhausted`. */
export interface BudgetRefusal {
  runId: string;
  tenant: string;
  attempt: number;
  message: string;
}

/**
 * Takes out of the queue the units their tenant's budget can no longer cover, latest first (lowest
 * lane first, then the newest of a lane): while the queued cost is above `budget − spent`, what the
 * budget would cover if every running unit freed its reservation unused, the door would have refused
 * them had it known what is spent now (after a usage floor, an overrun, or a budget lowered). Tenants
 * set to `park` keep theirs queued (they wait for the period or a raise, as documented); a held
 * tenant is not judged until its floor lands. The runs are told (`budget_exhausted`), and a re-offer
 * meets the door's own budget check.
 */
export function refuseUncoverable(s: CoreState, now: number): BudgetRefusal[] {
  const out: BudgetRefusal[] = [];
  for (const t of s.overBudget) {
    s.overBudget.delete(t);
    if (t.held || !s.tenants.has(t.id)) continue;
    touchLedger(s, t, now);
    if (!mayBeUncoverable(t)) {
      refreshTenant(s, t);
      continue;
    }
    const cover = (t.ledger.budget as number) - t.ledger.spent;
    for (const u of latestFirst(t)) {
      if (t.queuedCost <= cover) break;
      dropUnit(s, u);
      out.push({
        runId: u.runId,
        tenant: t.id,
        attempt: u.attempt,
        message:
          `Tenant ${t.id}'s token budget cannot cover this run any more: ` +
          `${Math.max(0, cover)} tokens left in the period, ${u.cost} needed with ${t.queuedCost} still queued.`,
      });
    }
    refreshTenant(s, t);
    s.overBudget.delete(t);
  }
  return out;
}

/** The tenant's live queued units, lowest lane first and newest first within a lane (a copy: safe to drop from). */
function latestFirst(t: TenantState): QueuedUnit[] {
  const out: QueuedUnit[] = [];
  for (const lane of [2, 1, 0] as const) out.push(...[...liveUnits(t.flows[lane])].reverse());
  return out;
}

/** Removes a queued unit (not a cancellation: the run is not finished, it is told and may offer again). */
function dropUnit(s: CoreState, u: QueuedUnit): void {
  const t = u.tenant;
  s.queued.delete(u.runId);
  s.queuedCost -= u.cost;
  t.queued--;
  t.queuedCost -= u.cost;
  s.lanes[u.lane].units--;
  tombstone(t.flows[u.lane], u);
}

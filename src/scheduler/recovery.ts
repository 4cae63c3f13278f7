import type { CoreState } from './core';
import { refreshTenant } from './eligibility';
import { touchLedger } from './tenants';

/**
 * Each tenant's current budget period: where recovered usage is counted from. With `unbounded`, a
 * period that never ends (`none`: no budget) is counted from the beginning (0), not from the moment
 * this chain created the ledger: after a loss that moment is the recovery itself, and a floor counted
 * from it missed every run that finished before (issue 9's drill: `spent` 3,050 below usage).
 */
export function recoveryWindows(
  s: CoreState,
  now: number,
  unbounded = false,
): { tenant: string; periodStart: number }[] {
  const out: { tenant: string; periodStart: number }[] = [];
  for (const t of s.tenants.values()) {
    if (touchLedger(s, t, now)) refreshTenant(s, t);
    out.push({
      tenant: t.id,
      periodStart: unbounded && t.ledger.period === 'none' ? 0 : t.ledger.periodStart,
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
): void {
  for (const r of recovered) {
    const t = s.tenants.get(r.tenant);
    if (!t || !Number.isFinite(r.tokens)) continue;
    if (touchLedger(s, t, now)) refreshTenant(s, t);
    const window = t.ledger.period === 'none' && r.periodStart === 0 ? 0 : t.ledger.periodStart;
    if (window !== r.periodStart || r.tokens <= t.ledger.spent) continue;
    const extra = Math.ceil(r.tokens) - t.ledger.spent;
    t.ledger.spent += extra;
    s.log.append(t.id, now, '(recovered)', 'settle', extra);
    refreshTenant(s, t);
  }
}

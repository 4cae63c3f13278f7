import type { Priority, TenantStatus } from '../../scheduler/types';
import { PRIORITIES } from '../../scheduler/types';

/** Why a tenant's token share sits below its entitlement: the first reason that applies, in this order. */
export type ShareReason = 'budget' | 'cap' | 'lane' | 'demand';

export interface ShareHint {
  reason: ShareReason;
  /** One sentence for the operator. */
  text: string;
}

/** A share this much below its entitlement (relative) is worth a reason; smaller gaps are noise. */
const SHORTFALL = 0.8;

/** The best lane a tenant has queued work in (PRIORITIES is best first), or undefined. */
const bestQueuedLane = (t: TenantStatus): Priority | undefined =>
  PRIORITIES.find((p) => t.queuedByPriority[p] > 0);

/**
 * Why `t` got `share` of the tokens when its weight entitles it to `entitled`: its budget is spent,
 * it holds its `maxInFlight`, its backlog waits in a lane below another tenant's (higher lanes are
 * admitted first), or it asked for less (nothing queued). Null when the share is near its entitlement
 * or above it, or when nothing explains the gap from what the scheduler reports.
 */
export function shareHint(
  t: TenantStatus,
  share: number | null,
  entitled: number | null,
  all: readonly TenantStatus[],
): ShareHint | null {
  if (entitled === null || (share ?? 0) >= entitled * SHORTFALL) return null;
  const queued = PRIORITIES.reduce((a, p) => a + t.queuedByPriority[p], 0);
  const { ledger } = t;
  if (ledger.remaining !== null && ledger.budget !== null && ledger.remaining <= 0)
    return {
      reason: 'budget',
      text: `Its ${ledger.period} budget of ${ledger.budget.toLocaleString('en-US')} tokens is spent: its runs wait for the next period or a raise.`,
    };
  if (queued > 0 && t.inFlight >= t.settings.maxInFlight)
    return {
      reason: 'cap',
      text: `At its cap of ${t.settings.maxInFlight} runs in flight (maxInFlight); ${queued} more wait.`,
    };
  const own = bestQueuedLane(t);
  if (own !== undefined) {
    const rank = PRIORITIES.indexOf(own);
    const above = all.find((o) => {
      const lane = bestQueuedLane(o);
      return o.tenant !== t.tenant && lane !== undefined && PRIORITIES.indexOf(lane) < rank;
    });
    if (above)
      return {
        reason: 'lane',
        text: `Its backlog waits in the ${own} lane; ${above.tenant}'s ${bestQueuedLane(above)} work is admitted first.`,
      };
    return null;
  }
  return { reason: 'demand', text: 'Nothing queued: it used less because it asked for less.' };
}

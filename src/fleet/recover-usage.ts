import type { Client } from '@temporalio/client';
import type { RecoveredUsage } from '../contract/scheduler-messages';
import { TenantIdKey } from '../contract/search-attributes';
import { fleetRunsClause } from './run-queues';

/** At most this many finished runs are read per recovery (a bound on its cost; logged when reached). */
const MAX_SCANNED = 500_000;

/**
 * Usage of the runs that finished in each tenant's current period, from Temporal visibility: the run
 * workflow writes its total usage into its memo when it ends. History is the ledger: this is what a
 * scheduler that lost its state (terminated, reset) floors `spent` at.
 */
export async function recoverUsage(
  client: Client,
  taskQueue: string,
  windows: readonly { tenant: string; periodStart: number }[],
): Promise<{ usage: RecoveredUsage[]; activeRuns: number; scanned: number; truncated: boolean }> {
  const runs = fleetRunsClause(taskQueue);
  // Runs past admission (open, no longer queued) are counted before the finished ones are read: a run
  // that closes in between is then either still counted or already visible as finished, never missed
  // by both. Queued runs used nothing, or carry what they used when they offer themselves again.
  const activeRuns = (
    await client.workflow.count(`${runs} AND ExecutionStatus = 'Running' AND RunStatus != 'queued'`)
  ).count;
  if (windows.length === 0) return { usage: [], activeRuns, scanned: 0, truncated: false };
  const byTenant = new Map(windows.map((w) => [w.tenant, { ...w, tokens: 0 }]));
  const since = Math.min(...windows.map((w) => w.periodStart));
  const query =
    runs + ` AND ExecutionStatus != 'Running' AND CloseTime >= '${new Date(since).toISOString()}'`;
  let scanned = 0;
  for await (const wf of client.workflow.list({ query, pageSize: 1000 })) {
    if (++scanned > MAX_SCANNED)
      return { usage: [...byTenant.values()], activeRuns, scanned, truncated: true };
    const tenant = wf.typedSearchAttributes.get(TenantIdKey);
    const w = tenant === undefined ? undefined : byTenant.get(tenant);
    const closed = wf.closeTime?.getTime() ?? 0;
    const used = Number(wf.memo?.usageTokens ?? 0);
    if (w && closed >= w.periodStart && Number.isFinite(used)) w.tokens += used;
  }
  return { usage: [...byTenant.values()], activeRuns, scanned, truncated: false };
}

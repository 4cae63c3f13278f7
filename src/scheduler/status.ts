import type { CoreState } from './core';
import { paramsOf } from './pools';
import { governorHead, governorStatus } from './governor';
import { fleetCap } from './admission';
import { ledgerView } from './ledger';
import { reservedSlots } from './reserve';
import type { SchedulerStatus, TenantStatus } from './types';

/** What the scheduler's one-line summary needs: the fleet's head figures, in O(1). */
export interface FleetSummary {
  mode: SchedulerStatus['mode'];
  intake: SchedulerStatus['intake'];
  inFlight: number;
  queued: Pick<SchedulerStatus['queued'], 'total' | 'byPriority'>;
  counters: Pick<SchedulerStatus['counters'], 'admitted'>;
  config: Pick<SchedulerStatus['config'], 'concurrency'>;
  governor: Pick<SchedulerStatus['governor'], 'concurrencyLimit' | 'tokensPerMinute' | 'throttledRecently'>;
}

/** The head figures (pure, O(1)): the scheduler loop shows them after every pass, with no tenant walk. */
export function fleetSummary(s: CoreState, now: number): FleetSummary {
  return {
    mode: !s.draining ? 'open' : s.leases.size > 0 ? 'draining' : 'drained',
    intake: s.intake,
    inFlight: s.leases.size,
    queued: {
      total: s.queued.size,
      byPriority: { interactive: s.lanes[0].units, standard: s.lanes[1].units, batch: s.lanes[2].units },
    },
    counters: { admitted: s.counters.admitted },
    config: { concurrency: s.settings.concurrency },
    governor: governorHead(s.governor, now),
  };
}

/** The operator's view of the fleet, minus Temporal history (pure). */
export function fleetStatus(s: CoreState, now: number): Omit<SchedulerStatus, 'history'> {
  const byTenant: Record<string, number> = {};
  for (const t of s.tenants.values()) if (t.queued > 0) byTenant[t.id] = t.queued;
  const { concurrency, floors, leaseTtlSeconds, globalMaxQueued } = s.settings;
  const head = fleetSummary(s, now);
  return {
    mode: head.mode,
    intake: head.intake,
    inFlight: head.inFlight,
    queued: { ...head.queued, byTenant },
    counters: { ...s.counters, admittedByPriority: { ...s.counters.admittedByPriority } },
    config: {
      concurrency,
      floors: { ...floors },
      leaseTtlSeconds,
      globalMaxQueued,
      interactiveReserve: s.settings.interactiveReserve ?? 0,
      reservedSlots: reservedSlots(s, fleetCap(s)),
      ...(s.settings.maxWaitSeconds ? { maxWaitSeconds: { ...s.settings.maxWaitSeconds } } : {}),
    },
    governor: governorStatus(s.governor, now, s.governorParams),
    ...(s.pools.size
      ? {
          pools: Object.fromEntries(
            [...s.pools].map(([name, g]) => [
              name,
              { ...governorStatus(g, now, paramsOf(s, name)), inFlight: s.leases.inPool(name) },
            ]),
          ),
        }
      : {}),
  };
}

/** One tenant's view: settings, queue depth and keys queued by lane, in flight and ledger (pure, O(keys)). */
export function tenantStatus(s: CoreState, id: string, now: number): TenantStatus | undefined {
  const t = s.tenants.get(id);
  if (!t) return undefined;
  const [i, st, b] = t.flows;
  return {
    tenant: t.id,
    settings: { ...t.settings, budget: { ...t.settings.budget } },
    queuedByPriority: { interactive: i.live, standard: st.live, batch: b.live },
    keysQueuedByPriority: {
      interactive: i.keys.backlogged(),
      standard: st.keys.backlogged(),
      batch: b.keys.backlogged(),
    },
    inFlight: t.inFlight,
    ledger: ledgerView(t.ledger, now),
  };
}

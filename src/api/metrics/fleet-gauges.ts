import { Counter, Gauge, type Registry } from 'prom-client';
import type { GovernorStatus, SchedulerStatus, TenantStatus } from '../../scheduler/types';
import type { FleetSnapshot } from '../fleet-snapshot';

export type FleetGauges = ReturnType<typeof createFleetGauges>;

/** Series read from the fleet at scrape time (the scheduler owns these numbers; the API only reports them). */
export function createFleetGauges(registry: Registry) {
  const registers = [registry];
  const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers });
  // Scheduler counters are absolute values in its status; exposed as counters so rate() works.
  const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  return {
    queueDepth: gauge('fairway_queue_depth', 'Queued (not admitted) units by tenant and priority.', [
      'tenant',
      'priority',
    ]),
    laneDepth: gauge('fairway_lane_queue_depth', 'Queued units by priority lane, all tenants.', ['priority']),
    tenantKeys: gauge(
      'fairway_tenant_keys_queued',
      'Fairness keys with queued units, by tenant and priority (the default key and each hash bucket count as one).',
      ['tenant', 'priority'],
    ),
    tenantKeyBuckets: gauge(
      'fairway_tenant_key_buckets_queued',
      "Hash buckets with queued units (shared by the keys past a flow's bound), by tenant and priority.",
      ['tenant', 'priority'],
    ),
    tenantDepth: gauge('fairway_tenant_queue_depth', 'Queued units by tenant, all lanes.', ['tenant']),
    inFlight: gauge('fairway_in_flight', 'Admitted units holding a lease.'),
    tenantInFlight: gauge('fairway_tenant_in_flight', 'Admitted units holding a lease, by tenant.', [
      'tenant',
    ]),
    concurrency: gauge('fairway_fleet_concurrency', 'Configured fleet concurrency limit.'),
    governorConcurrency: gauge(
      'fairway_governor_concurrency_limit',
      'Concurrency limit the token governor allows now, by model pool ("" the default pool).',
      ['pool'],
    ),
    governorTpm: gauge(
      'fairway_governor_tokens_per_minute',
      'Tokens per minute the token governor admits now, by model pool ("" the default pool).',
      ['pool'],
    ),
    poolInFlight: gauge(
      'fairway_pool_in_flight',
      'Admitted units holding a lease, by named model pool (the default pool: fairway_in_flight less these).',
      ['pool'],
    ),
    providerTpm: gauge(
      'fairway_provider_tokens_per_minute',
      "The provider's advertised tokens-per-minute limit, by model pool; 0 until a call reported one.",
      ['pool'],
    ),
    servedTpm: gauge(
      'fairway_served_tokens_per_minute',
      'Tokens per minute the provider served lately, by model pool; 0 until a call was reported.',
      ['pool'],
    ),
    providerRpm: gauge(
      'fairway_provider_requests_per_minute',
      "The provider's advertised requests-per-minute limit, by model pool; 0 until a call reported one.",
      ['pool'],
    ),
    requestBoundTpm: gauge(
      'fairway_request_bound_tokens_per_minute',
      "What the provider's request limit allows in tokens per minute at the tokens a call lately served, by model pool; 0 until measured.",
      ['pool'],
    ),
    throttled: gauge(
      'fairway_governor_throttled_recently',
      "1 when the model plane throttled the pool's calls recently, else 0, by model pool.",
      ['pool'],
    ),
    breaker: gauge(
      'fairway_governor_breaker_state',
      "1 for the key breaker's current state (closed, open, half_open), 0 for the others, by model pool.",
      ['pool', 'state'],
    ),
    breakerTrips: counter(
      'fairway_governor_breaker_trips_total',
      'Times the key breaker opened, by model pool.',
      ['pool'],
    ),
    governorDecreases: counter(
      'fairway_governor_decreases_total',
      'Multiplicative decreases of the governor, by model pool.',
      ['pool'],
    ),
    drainMode: gauge(
      'fairway_drain_mode',
      '1 for the current drain mode (open, draining, drained), 0 for the others.',
      ['mode'],
    ),
    intake: gauge('fairway_intake', '1 for the current intake (open, refuse, hold), 0 for the others.', [
      'intake',
    ]),
    submitted: counter('fairway_scheduler_submitted_total', 'Units offered to the scheduler.'),
    admitted: counter('fairway_admissions_total', 'Units admitted by the scheduler.'),
    laneAdmitted: counter(
      'fairway_lane_admissions_total',
      'Units admitted by the scheduler, by priority lane.',
      ['priority'],
    ),
    modelCalls: counter('fairway_model_calls_total', 'Model calls the workers reported to the scheduler.'),
    modelThrottled: counter(
      'fairway_model_throttled_total',
      'Model calls the provider throttled (429), as the workers reported them.',
    ),
    released: counter('fairway_releases_total', 'Units released by outcome.', ['outcome']),
    schedulerShed: counter('fairway_scheduler_shed_total', 'Units the scheduler refused.'),
    ledgerReserved: gauge('fairway_ledger_reserved_tokens', 'Tokens reserved in the ledger, by tenant.', [
      'tenant',
    ]),
    ledgerSpent: gauge('fairway_ledger_spent_tokens', 'Tokens spent this period, by tenant.', ['tenant']),
    ledgerRemaining: gauge(
      'fairway_ledger_remaining_tokens',
      'Budget left this period, by tenant (budgeted tenants).',
      ['tenant'],
    ),
    historyLength: gauge('fairway_scheduler_history_length', 'Events in the scheduler workflow run.'),
  };
}

/** The `pool` label of the default model pool's series (a named pool's is its name). */
const DEFAULT_POOL_LABEL = '';

/** One model pool's governor series (`pool` its name, '' the default pool). */
function setGovernor(g: FleetGauges, pool: string, gs: GovernorStatus): void {
  g.governorConcurrency.set({ pool }, gs.concurrencyLimit);
  g.governorTpm.set({ pool }, gs.tokensPerMinute);
  g.throttled.set({ pool }, gs.throttledRecently ? 1 : 0);
  // 0 until measured, as these series were before they had a label (a labelled series is absent until set).
  g.providerTpm.set({ pool }, gs.providerTokensPerMinute ?? 0);
  g.servedTpm.set({ pool }, gs.servedTokensPerMinute ?? 0);
  g.providerRpm.set({ pool }, gs.providerRequestsPerMinute ?? 0);
  g.requestBoundTpm.set({ pool }, gs.requestBoundTokensPerMinute ?? 0);
  g.governorDecreases.inc({ pool }, gs.decreases);
  for (const state of ['closed', 'open', 'half_open'] as const)
    g.breaker.set({ pool, state }, (gs.breaker?.state ?? 'closed') === state ? 1 : 0);
  g.breakerTrips.inc({ pool }, gs.breaker?.trips ?? 0);
}

function setScheduler(g: FleetGauges, s: SchedulerStatus): void {
  for (const [priority, n] of Object.entries(s.queued.byPriority)) g.laneDepth.set({ priority }, n);
  for (const [tenant, n] of Object.entries(s.queued.byTenant)) g.tenantDepth.set({ tenant }, n);
  g.inFlight.set(s.inFlight);
  g.concurrency.set(s.config.concurrency);
  setGovernor(g, DEFAULT_POOL_LABEL, s.governor);
  // Sorted, so the exposition's order does not follow the order pools were first used in.
  for (const [pool, p] of Object.entries(s.pools ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    setGovernor(g, pool, p);
    g.poolInFlight.set({ pool }, p.inFlight);
  }
  for (const mode of ['open', 'draining', 'drained'] as const)
    g.drainMode.set({ mode }, s.mode === mode ? 1 : 0);
  for (const intake of ['open', 'refuse', 'hold'] as const)
    g.intake.set({ intake }, s.intake === intake ? 1 : 0);
  g.submitted.inc(s.counters.submitted);
  g.admitted.inc(s.counters.admitted);
  for (const [priority, n] of Object.entries(s.counters.admittedByPriority))
    g.laneAdmitted.inc({ priority }, n);
  g.modelCalls.inc(s.counters.modelCalls);
  g.modelThrottled.inc(s.counters.throttled);
  g.schedulerShed.inc(s.counters.shed);
  for (const outcome of ['completed', 'failed', 'cancelled', 'expired', 'gated'] as const) {
    g.released.inc({ outcome }, s.counters[outcome]);
  }
  g.historyLength.set(s.history.length);
}

function setTenant(g: FleetGauges, t: TenantStatus): void {
  for (const [priority, n] of Object.entries(t.queuedByPriority))
    g.queueDepth.set({ tenant: t.tenant, priority }, n);
  for (const [priority, k] of Object.entries(t.keysQueuedByPriority)) {
    g.tenantKeys.set({ tenant: t.tenant, priority }, k.keys);
    g.tenantKeyBuckets.set({ tenant: t.tenant, priority }, k.buckets);
  }
  g.tenantInFlight.set({ tenant: t.tenant }, t.inFlight);
  g.ledgerReserved.set({ tenant: t.tenant }, t.ledger.reserved);
  g.ledgerSpent.set({ tenant: t.tenant }, t.ledger.spent);
  if (t.ledger.remaining !== null) g.ledgerRemaining.set({ tenant: t.tenant }, t.ledger.remaining);
}

/**
 * Sets the gauges from one read of the fleet. Every series is reset first, so a tenant or a model pool
 * that has gone away leaves no stale numbers; tenant series are absent when the tenants' read failed.
 */
export function applyFleetSnapshot(g: FleetGauges, snapshot: FleetSnapshot): void {
  for (const metric of Object.values(g)) metric.reset();
  setScheduler(g, snapshot.status);
  for (const status of snapshot.tenants ?? []) setTenant(g, status);
}

import type { Logger } from 'pino';
import type { EventCaps, RunCaps, TenantDefaults } from '../config';
import type { ApiStore } from '../stores/api/api-store';
import type { BatchItemStore } from '../stores/batch-items/batch-items';
import type { SchedulerStateStore } from '../stores/scheduler-state/scheduler-state';
import type { FleetPort } from '../contract/fleet-port';
import type { ApiMetrics } from './metrics/api-metrics';
import type { RateBuckets } from './intake/token-buckets';
import type { EventDispatcher } from './intake/event-dispatch';
import type { CursorSigner } from './intake/cursor';
import type { FleetSnapshots } from './fleet-snapshot';
import type { AgentCatalog } from './agents/catalog';
import type { ServedAgents } from './agents/served';
import type { SchedulesPort } from '../contract/schedules';
import type { WebhookTargets } from './webhooks/targets';

/** What the routers share: built once by createApp. */
export interface ApiContext {
  fleet: FleetPort;
  store: ApiStore;
  /** Batches sent in parts: their state and items (shared with the workers, which read the items). */
  batchItems: BatchItemStore;
  /** The operator's drain and runtime settings, outside the scheduler chain: written before the chain is told. */
  schedulerState: SchedulerStateStore;
  log: Logger;
  now: () => number;
  tenantDefaults: TenantDefaults;
  runCaps: RunCaps;
  eventCaps: EventCaps;
  /** A pending idempotency claim older than this (ms) is stale: a retry with its key takes it over. */
  pendingClaimTtlMs: number;
  /** The shortest interval (seconds) a schedule may fire at. */
  scheduleMinIntervalSeconds: number;
  metrics: ApiMetrics;
  submitLimiter: RateBuckets;
  /** Turns recorded events into runs. */
  events: EventDispatcher;
  /** Every tenant request, charged at the door before anything is looked up. */
  requestLimiter: RateBuckets;
  cursors: CursorSigner;
  /** The one shared read of the scheduler's status and tenants (metrics and the console). */
  snapshots: FleetSnapshots;
  /** The agents runs may name: the built-ins and the agents modules (AGENTS). */
  agents: AgentCatalog;
  /** Whether a worker polls each agent's task queue, read a few seconds at most. */
  served: ServedAgents;
  /** Tenants' schedules (Temporal Schedules in production). */
  schedules: SchedulesPort;
  /** Which addresses webhook endpoints may name (WEBHOOK_TARGETS). */
  webhookTargets: WebhookTargets;
}

import type { Tracer } from '@opentelemetry/api';
import { traceRequests } from './middleware/trace-requests';
import express from 'express';
import type { Logger } from 'pino';
import type { ApiStore } from '../stores/api/api-store';
import { openSqliteBatchItems } from '../stores/batch-items/batch-items-sqlite';
import type { SchedulerStateStore } from '../stores/scheduler-state/scheduler-state';
import { PENDING_CLAIM_TTL_MS } from '../stores/idempotency/idempotency';
import { openSqliteSchedulerState } from '../stores/scheduler-state/scheduler-state-sqlite';
import type { BatchItemStore } from '../stores/batch-items/batch-items';
import { withDbUnavailableAs503 } from '../stores/api/api-store-pg';
import { authenticate, requireAdmin } from './middleware/auth';
import { jsonBody } from './middleware/json-body';
import {
  DEFAULT_EVENT_CAPS,
  DEFAULT_RUN_CAPS,
  type EventCaps,
  type RunCaps,
  type TenantDefaults,
} from '../config';
import type { ApiContext } from './context';
import { errorHandler, notFoundHandler } from './middleware/errors';
import { refuseMethods, securityHeaders } from './middleware/security-headers';
import type { FleetPort } from '../contract/fleet-port';
import { countRequests, createApiMetrics } from './metrics/api-metrics';
import { metricsHandler } from './metrics/metrics-handler';
import { SharedBuckets } from './intake/token-buckets';
import { CursorSigner } from './intake/cursor';
import { adminFleetRouter } from './routes/admin-fleet';
import { adminTenantsRouter } from './routes/admin-tenants';
import { batchesRouter } from './routes/batches';
import { opsRouter } from './routes/ops';
import { runsRouter } from './routes/runs';
import { tenantMeRouter } from './routes/tenant-me';
import { consolePageRouter, consoleStateRouter } from './console/router';
import { ConsoleSampler } from './console/sampler';
import { eventIngressRouter, eventsRouter } from './routes/events';
import { triggersRouter } from './routes/triggers';
import { webhookSecretsRouter } from './routes/webhook-secrets';
import { webhooksRouter } from './routes/webhooks';
import type { WebhookTargets } from './webhooks/targets';
import { EventDispatcher } from './intake/event-dispatch';
import { FleetSnapshots } from './fleet-snapshot';
import { rateLimitRequest } from './intake/shed';
import { builtInCatalog, type AgentCatalog } from './agents/catalog';
import { ServedAgents } from './agents/served';
import { agentsRouter } from './routes/agents';
import { approvalsRouter } from './routes/approvals';
import { schedulesRouter } from './routes/schedules';
import { MIN_SCHEDULE_INTERVAL_SECONDS } from './intake/schedule-schemas';
import type { SchedulesPort } from '../contract/schedules';
import { MemorySchedules } from '../fleet/schedules/memory-schedules';

export interface ApiDeps {
  fleet: FleetPort;
  /** Tenants, idempotency keys and events (`openStore(location)`). */
  db: ApiStore;
  /**
   * Batches sent in parts (`openBatchItems(location)`, where the workers read them too). Default: one
   * in memory, for an API whose parted batches only an in-process fleet reads (tests).
   */
  batchItems?: BatchItemStore;
  /**
   * The operator's drain and runtime settings, kept outside the scheduler chain
   * (`openSchedulerState(apiStoreLocation)`, which every API process shares and every chain starts
   * from). Default: one in memory (tests).
   */
  schedulerState?: SchedulerStateStore;
  adminToken: string;
  /** A second admin token accepted too, while the admin token rotates. */
  adminTokenNext?: string;
  tenantDefaults: TenantDefaults;
  /** Per-run caps; default DEFAULT_RUN_CAPS. */
  runCaps?: RunCaps;
  /** Caps on triggers and webhook secrets; default DEFAULT_EVENT_CAPS. */
  eventCaps?: EventCaps;
  /** When a pending idempotency claim is stale (ms); default PENDING_CLAIM_TTL_MS. */
  pendingClaimTtlMs?: number;
  /** The shortest interval (seconds) a schedule may fire at; default MIN_SCHEDULE_INTERVAL_SECONDS. */
  scheduleMinIntervalSeconds?: number;
  log: Logger;
  /** Clock in ms since epoch; tests pass their own. */
  now?: () => number;
  /** The console's sampling interval (ms); 2000. */
  consoleSampleMs?: number;
  /** Dispatches recorded events; without one, createApp makes one that runs only when an event arrives. */
  events?: EventDispatcher;
  /** The agents runs may name (`loadAgentCatalog(config.agentModules)`); default the built-ins only. */
  agents?: AgentCatalog;
  /** The Temporal Web UI the console links runs to (`<url>/namespaces/<namespace>/workflows/<runId>`). */
  temporalUi?: { url: string; namespace: string };
  /** Tenants' schedules (`createTemporalSchedules`); default: kept in memory, never firing (tests). */
  schedules?: SchedulesPort;
  /** Traces each request (`startTracing(config.tracing)?.tracer`); absent: untraced. */
  tracer?: Tracer;
  /** Which addresses webhook endpoints may name (WEBHOOK_TARGETS); default `public`. */
  webhookTargets?: WebhookTargets;
}

/** The app, and the console's sampler (the process starts it, so history exists before a page opens). */
export type FairwayApp = express.Express & { consoleSampler: ConsoleSampler };

/** The HTTP API of docs/api.md as an Express app; does not listen, so tests drive it with supertest. */
export function createApp(deps: ApiDeps): FairwayApp {
  return createApps(deps).api;
}

/**
 * The API and a metrics-only app (`GET /metrics` without auth) for METRICS_PORT, which the caller binds
 * to loopback. Both share one context, so they report the same series.
 */
export function createApps(deps: ApiDeps): { api: FairwayApp; metrics: express.Express } {
  const now = deps.now ?? Date.now;
  const adminTokens = deps.adminTokenNext ? [deps.adminToken, deps.adminTokenNext] : [deps.adminToken];
  const rate = deps.tenantDefaults.ratePerSecond;
  const requestRate = deps.tenantDefaults.requestRatePerSecond ?? rate;
  const ctx: ApiContext = {
    fleet: deps.fleet,
    store: deps.db,
    batchItems: withDbUnavailableAs503(deps.batchItems ?? openSqliteBatchItems(':memory:')),
    schedulerState: deps.schedulerState ?? openSqliteSchedulerState(':memory:'),
    log: deps.log,
    now,
    tenantDefaults: deps.tenantDefaults,
    runCaps: deps.runCaps ?? DEFAULT_RUN_CAPS,
    eventCaps: deps.eventCaps ?? DEFAULT_EVENT_CAPS,
    pendingClaimTtlMs: deps.pendingClaimTtlMs ?? PENDING_CLAIM_TTL_MS,
    scheduleMinIntervalSeconds: deps.scheduleMinIntervalSeconds ?? MIN_SCHEDULE_INTERVAL_SECONDS,
    metrics: createApiMetrics(),
    submitLimiter: new SharedBuckets(deps.db.rateLimits, 'submit', rate, 2 * rate, now),
    events: deps.events ?? new EventDispatcher({ fleet: deps.fleet, store: deps.db, log: deps.log, now }),
    requestLimiter: new SharedBuckets(deps.db.rateLimits, 'request', requestRate, 2 * requestRate, now),
    cursors: new CursorSigner(deps.adminToken),
    agents: deps.agents ?? builtInCatalog(),
    schedules: deps.schedules ?? new MemorySchedules(now),
    webhookTargets: deps.webhookTargets ?? 'public',
    served: new ServedAgents(deps.fleet, deps.log, now),
    snapshots: new FleetSnapshots({
      fleet: deps.fleet,
      tenants: async () => (await deps.db.listTenants()).map((t) => t.tenant),
      log: deps.log,
      now,
    }),
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (deps.tracer) app.use(traceRequests(deps.tracer));
  app.use(countRequests(ctx.metrics));
  app.use(securityHeaders);
  app.use(refuseMethods);
  app.use(opsRouter(ctx));
  const consoleSampler = new ConsoleSampler({
    fleet: ctx.fleet,
    tenants: async () => (await ctx.store.listTenants()).map((t) => t.tenant),
    snapshots: ctx.snapshots,
    sheds: async () =>
      Object.fromEntries(
        (await ctx.metrics.sheds.get()).values.map((v) => [String(v.labels.reason), v.value]),
      ),
    log: ctx.log,
    now,
    ...(deps.consoleSampleMs ? { sampleMs: deps.consoleSampleMs } : {}),
  });
  app.use(consolePageRouter(deps.temporalUi));
  // Before the bearer-only middleware: events also come signed, and the signature needs the raw body.
  app.use('/v1/events', eventIngressRouter(ctx, adminTokens));
  // Metrics name every tenant with its backlog and spend: admin only here; METRICS_PORT serves them on loopback.
  app.get('/metrics', authenticate(ctx.store, adminTokens), requireAdmin, metricsHandler(ctx));

  const v1 = express.Router();
  v1.use(authenticate(ctx.store, adminTokens));
  // Every tenant request, resends included, is one request against the tenant's rate, before any lookup.
  v1.use(async (_req, res, next) => {
    await rateLimitRequest(ctx, res);
    next();
  });
  v1.use('/admin', requireAdmin);
  v1.use(jsonBody());
  v1.use('/admin/tenants', adminTenantsRouter(ctx));
  v1.use('/admin/console', consoleStateRouter(consoleSampler));
  v1.use('/admin', adminFleetRouter(ctx));
  v1.use('/agents', agentsRouter(ctx));
  v1.use('/approvals', approvalsRouter(ctx));
  v1.use('/runs', runsRouter(ctx));
  v1.use('/batches', batchesRouter(ctx));
  v1.use('/tenants', tenantMeRouter(ctx));
  v1.use('/events', eventsRouter(ctx));
  v1.use('/triggers', triggersRouter(ctx));
  v1.use('/schedules', schedulesRouter(ctx));
  v1.use('/webhook-secrets', webhookSecretsRouter(ctx));
  v1.use('/webhooks', webhooksRouter(ctx));
  app.use('/v1', v1);

  app.use(notFoundHandler);
  app.use(errorHandler(ctx.log));

  const metrics = express();
  metrics.disable('x-powered-by');
  metrics.use(securityHeaders);
  metrics.get('/metrics', metricsHandler(ctx));
  metrics.use(notFoundHandler);
  metrics.use(errorHandler(ctx.log));
  return { api: Object.assign(app, { consoleSampler }), metrics };
}

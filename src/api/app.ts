import express from 'express';
import type { Logger } from 'pino';
import type { ApiStore } from './stores/store';
import { authenticate, requireAdmin } from './middleware/auth';
import { jsonBody } from './middleware/json-body';
import { DEFAULT_RUN_CAPS, type RunCaps, type TenantDefaults } from '../config';
import type { ApiContext } from './context';
import { errorHandler, notFoundHandler } from './middleware/errors';
import { refuseMethods, securityHeaders } from './middleware/security-headers';
import type { FleetPort } from '../contract/fleet-port';
import { countRequests, createApiMetrics } from './metrics/api-metrics';
import { metricsHandler } from './metrics/metrics-handler';
import { TokenBuckets } from './intake/token-buckets';
import { CursorSigner } from './intake/cursor';
import { adminFleetRouter } from './routes/admin-fleet';
import { adminTenantsRouter } from './routes/admin-tenants';
import { batchesRouter } from './routes/batches';
import { opsRouter } from './routes/ops';
import { runsRouter } from './routes/runs';
import { tenantMeRouter } from './routes/tenant-me';

export interface ApiDeps {
  fleet: FleetPort;
  /** Tenants and idempotency keys (`openStore(file)`). */
  db: ApiStore;
  adminToken: string;
  tenantDefaults: TenantDefaults;
  /** Per-run caps; default DEFAULT_RUN_CAPS. */
  runCaps?: RunCaps;
  log: Logger;
  /** Clock in ms since epoch; tests pass their own. */
  now?: () => number;
}

/** The HTTP API of docs/api.md as an Express app; does not listen, so tests drive it with supertest. */
export function createApp(deps: ApiDeps): express.Express {
  return createApps(deps).api;
}

/**
 * The API and a metrics-only app (`GET /metrics` without auth) for METRICS_PORT, which the caller binds
 * to loopback. Both share one context, so they report the same series.
 */
export function createApps(deps: ApiDeps): { api: express.Express; metrics: express.Express } {
  const now = deps.now ?? Date.now;
  const rate = deps.tenantDefaults.ratePerSecond;
  const requestRate = deps.tenantDefaults.requestRatePerSecond ?? rate;
  const ctx: ApiContext = {
    fleet: deps.fleet,
    store: deps.db,
    log: deps.log,
    now,
    tenantDefaults: deps.tenantDefaults,
    runCaps: deps.runCaps ?? DEFAULT_RUN_CAPS,
    metrics: createApiMetrics(),
    submitLimiter: new TokenBuckets(rate, 2 * rate, now),
    requestLimiter: new TokenBuckets(requestRate, 2 * requestRate, now),
    cursors: new CursorSigner(deps.adminToken),
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(countRequests(ctx.metrics));
  app.use(securityHeaders);
  app.use(refuseMethods);
  app.use(opsRouter(ctx));
  // Metrics name every tenant with its backlog and spend: admin only here; METRICS_PORT serves them on loopback.
  app.get('/metrics', authenticate(ctx.store, deps.adminToken), requireAdmin, metricsHandler(ctx));

  const v1 = express.Router();
  v1.use(authenticate(ctx.store, deps.adminToken));
  v1.use('/admin', requireAdmin);
  v1.use(jsonBody());
  v1.use('/admin/tenants', adminTenantsRouter(ctx));
  v1.use('/admin', adminFleetRouter(ctx));
  v1.use('/runs', runsRouter(ctx));
  v1.use('/batches', batchesRouter(ctx));
  v1.use('/tenants', tenantMeRouter(ctx));
  app.use('/v1', v1);

  app.use(notFoundHandler);
  app.use(errorHandler(ctx.log));

  const metrics = express();
  metrics.disable('x-powered-by');
  metrics.use(securityHeaders);
  metrics.get('/metrics', metricsHandler(ctx));
  metrics.use(notFoundHandler);
  metrics.use(errorHandler(ctx.log));
  return { api: app, metrics };
}

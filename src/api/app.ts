import express from 'express';
import type { Logger } from 'pino';
import type { ApiStore } from './stores/store';
import { authenticate, requireAdmin } from './middleware/auth';
import { jsonBody } from './middleware/json-body';
import type { TenantDefaults } from '../config';
import type { ApiContext } from './context';
import { errorHandler, notFoundHandler } from './middleware/errors';
import type { FleetPort } from '../contract/fleet-port';
import { countRequests, createApiMetrics } from './metrics/api-metrics';
import { TokenBuckets } from './intake/token-buckets';
import { adminFleetRouter } from './routes/admin-fleet';
import { adminTenantsRouter } from './routes/admin-tenants';
import { batchesRouter } from './routes/batches';
import { opsRouter } from './routes/ops';
import { runsRouter } from './routes/runs';
import { tenantMeRouter } from './routes/tenant-me';
import { consolePageRouter, consoleStateRouter } from '../console/router';
import { ConsoleSampler } from '../console/sampler';

export interface ApiDeps {
  fleet: FleetPort;
  /** Tenants and idempotency keys (`openStore(file)`). */
  db: ApiStore;
  adminToken: string;
  tenantDefaults: TenantDefaults;
  log: Logger;
  /** Clock in ms since epoch; tests pass their own. */
  now?: () => number;
  /** The console's sampling interval (ms); 2000. */
  consoleSampleMs?: number;
}

/** The app, and the console's sampler (the process starts it, so history exists before a page opens). */
export type FairwayApp = express.Express & { consoleSampler: ConsoleSampler };

/** The HTTP API of docs/api.md as an Express app; does not listen, so tests drive it with supertest. */
export function createApp(deps: ApiDeps): FairwayApp {
  const now = deps.now ?? Date.now;
  const rate = deps.tenantDefaults.ratePerSecond;
  const ctx: ApiContext = {
    fleet: deps.fleet,
    store: deps.db,
    log: deps.log,
    now,
    tenantDefaults: deps.tenantDefaults,
    metrics: createApiMetrics(),
    submitLimiter: new TokenBuckets(rate, 2 * rate, now),
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(countRequests(ctx.metrics));
  app.use(opsRouter(ctx));
  const consoleSampler = new ConsoleSampler({
    fleet: ctx.fleet,
    tenants: () => ctx.store.listTenants().map((t) => t.tenant),
    sheds: async () =>
      Object.fromEntries(
        (await ctx.metrics.sheds.get()).values.map((v) => [String(v.labels.reason), v.value]),
      ),
    log: ctx.log,
    now,
    ...(deps.consoleSampleMs ? { sampleMs: deps.consoleSampleMs } : {}),
  });
  app.use(consolePageRouter());

  const v1 = express.Router();
  v1.use(authenticate(ctx.store, deps.adminToken));
  v1.use('/admin', requireAdmin);
  v1.use(jsonBody());
  v1.use('/admin/tenants', adminTenantsRouter(ctx));
  v1.use('/admin/console', consoleStateRouter(consoleSampler));
  v1.use('/admin', adminFleetRouter(ctx));
  v1.use('/runs', runsRouter(ctx));
  v1.use('/batches', batchesRouter(ctx));
  v1.use('/tenants', tenantMeRouter(ctx));
  app.use('/v1', v1);

  app.use(notFoundHandler);
  app.use(errorHandler(ctx.log));
  return Object.assign(app, { consoleSampler });
}

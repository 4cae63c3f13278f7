import { Router } from 'express';
import { tenantOf } from '../middleware/auth';
import type { ApiContext } from '../context';
import { resyncTenant } from '../tenant-sync';
import { ApiError } from '../../contract/errors';

/** `GET /v1/tenants/me`: the caller's settings, backlog, in-flight count and ledger. */
export function tenantMeRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/me', async (_req, res) => {
    const record = tenantOf(res, 'act as a tenant');
    let status = await ctx.fleet.tenantStatus(record.tenant);
    if (!status) {
      // The scheduler lost the tenant (restart); re-send the stored settings and ask again.
      await resyncTenant(ctx.fleet, record, ctx.log);
      status = await ctx.fleet.tenantStatus(record.tenant);
    }
    if (!status)
      throw new ApiError(
        'unavailable',
        'The scheduler does not know this tenant yet; retry shortly.',
        undefined,
        1,
      );
    const byPriority = status.queuedByPriority;
    const total = Object.values(byPriority).reduce((a, b) => a + b, 0);
    res.json({
      tenant: record.tenant,
      settings: record.settings,
      queued: { total, byPriority },
      inFlight: status.inFlight,
      ledger: status.ledger,
    });
  });

  return router;
}

import { Router } from 'express';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import { openApiDocument } from '../openapi/document';
import { withTimeout } from '../../util/with-timeout';

const READY_TIMEOUT_MS = 3000;

/** Unauthenticated endpoints: liveness, readiness, the OpenAPI document. (Metrics need the admin token.) */
export function opsRouter(ctx: ApiContext): Router {
  const router = Router();

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res) => {
    let ready = false;
    try {
      ready = await withTimeout(ctx.fleet.ready(), READY_TIMEOUT_MS, 'fleet.ready');
    } catch (err) {
      ctx.log.warn({ err }, 'readiness check failed');
    }
    if (!ready) {
      throw new ApiError('not_ready', 'Temporal is unreachable or the scheduler workflow is not running.');
    }
    res.json({ status: 'ready' });
  });

  router.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument(ctx.agents));
  });

  return router;
}

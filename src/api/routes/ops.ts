import { Router } from 'express';
import type { ApiContext } from '../context';
import { ApiError } from '../../contract/errors';
import { refreshFleetGauges } from '../metrics/fleet-gauges';
import { openApiDocument } from '../openapi/document';
import { withTimeout } from '../../util/with-timeout';

const READY_TIMEOUT_MS = 3000;

/** Unauthenticated endpoints: liveness, readiness, Prometheus metrics, the OpenAPI document. */
export function opsRouter(ctx: ApiContext): Router {
  const router = Router();
  let refreshing: Promise<boolean> | undefined;

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

  router.get('/metrics', async (_req, res) => {
    // Concurrent scrapes share one refresh: gauges are reset and refilled, and must not interleave.
    refreshing ??= refreshFleetGauges(
      ctx.metrics.fleet,
      ctx.fleet,
      ctx.store.listTenants().map((t) => t.tenant),
      ctx.log,
    ).finally(() => {
      refreshing = undefined;
    });
    const up = await refreshing;
    const { registry, fleetRegistry, fleetUp } = ctx.metrics;
    fleetUp.set(up ? 1 : 0);
    const text = (await registry.metrics()) + (up ? `\n${await fleetRegistry.metrics()}` : '');
    res.type(registry.contentType).send(text);
  });

  router.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });

  return router;
}

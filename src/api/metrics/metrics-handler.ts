import type { RequestHandler } from 'express';
import type { ApiContext } from '../context';
import { refreshFleetGauges } from './fleet-gauges';

/** Fleet gauges are read from the scheduler at most this often; scrapes in between reuse them. */
export const METRICS_REFRESH_MS = 5000;

/**
 * `GET /metrics` in the Prometheus text format. The API's own series are always current; the fleet's
 * are refreshed at most every METRICS_REFRESH_MS (concurrent scrapes share one refresh), so scraping
 * fast does not load the scheduler.
 */
export function metricsHandler(ctx: ApiContext): RequestHandler {
  let refreshing: Promise<boolean> | undefined;
  let last: { at: number; up: boolean } | undefined;
  const refresh = (): Promise<boolean> => {
    const now = ctx.now();
    if (last && now - last.at < METRICS_REFRESH_MS) return Promise.resolve(last.up);
    // Gauges are reset and refilled, and must not interleave.
    refreshing ??= ctx.store
      .listTenants()
      .then((tenants) =>
        refreshFleetGauges(
          ctx.metrics.fleet,
          ctx.fleet,
          tenants.map((t) => t.tenant),
          ctx.log,
        ),
      )
      .then((up) => {
        last = { at: now, up };
        return up;
      })
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };
  return async (_req, res) => {
    const up = await refresh();
    const { registry, fleetRegistry, fleetUp } = ctx.metrics;
    fleetUp.set(up ? 1 : 0);
    const text = (await registry.metrics()) + (up ? `\n${await fleetRegistry.metrics()}` : '');
    res.type(registry.contentType).send(text);
  };
}

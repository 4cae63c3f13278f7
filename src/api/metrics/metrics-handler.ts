import type { RequestHandler } from 'express';
import type { ApiContext } from '../context';
import { applyFleetSnapshot } from './fleet-gauges';
import type { FleetSnapshot } from '../fleet-snapshot';

/** Fleet gauges are read from the scheduler at most this often; scrapes in between reuse them. */
export const METRICS_REFRESH_MS = 5000;

/**
 * `GET /metrics` in the Prometheus text format. The API's own series are always current; the fleet's
 * come from the API's shared scheduler read (ctx.snapshots), at most METRICS_REFRESH_MS old: the
 * console's sampler refreshes it every 2 s, so a scrape usually costs the scheduler nothing, and
 * scraping fast never loads it.
 */
export function metricsHandler(ctx: ApiContext): RequestHandler {
  let applied: FleetSnapshot | undefined;
  return async (_req, res) => {
    let up = true;
    try {
      const snapshot = await ctx.snapshots.read(METRICS_REFRESH_MS);
      // Gauges are reset and refilled from a snapshot once, between two awaits: never interleaved.
      if (snapshot !== applied) applyFleetSnapshot(ctx.metrics.fleet, snapshot);
      applied = snapshot;
    } catch (err) {
      ctx.log.warn({ err }, 'metrics: scheduler status unavailable');
      up = false;
    }
    const { registry, fleetRegistry, fleetUp } = ctx.metrics;
    fleetUp.set(up ? 1 : 0);
    const text = (await registry.metrics()) + (up ? `\n${await fleetRegistry.metrics()}` : '');
    res.type(registry.contentType).send(text);
  };
}

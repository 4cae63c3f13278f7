import { Counter, Registry } from 'prom-client';
import type { RequestHandler } from 'express';
import { createFleetGauges, type FleetGauges } from './fleet-metrics';

/** The API's Prometheus registry: counters the routes increment, and gauges read from the fleet at scrape time. */
export interface ApiMetrics {
  registry: Registry;
  /** Submissions refused at the door, by reason (queue_full, rate_limited, budget_exhausted, draining). */
  sheds: Counter<'reason'>;
  /** Runs accepted at the door (batch items included), by priority. */
  submissions: Counter<'priority'>;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  fleet: FleetGauges;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    sheds: new Counter({
      name: 'fairway_sheds_total',
      help: 'Submissions shed at the API door, by reason.',
      labelNames: ['reason'],
      registers,
    }),
    submissions: new Counter({
      name: 'fairway_submissions_total',
      help: 'Runs accepted at the API door (batch items included), by priority.',
      labelNames: ['priority'],
      registers,
    }),
    httpRequests: new Counter({
      name: 'fairway_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    fleet: createFleetGauges(registry),
  };
}

/** Counts every answered request by its route pattern (not its URL, which would explode cardinality). */
export function countRequests(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const routePath: unknown = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof routePath === 'string' ? `${req.baseUrl}${routePath}` : 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

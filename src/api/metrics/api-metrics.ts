import { Counter, Gauge, Registry } from 'prom-client';
import type { RequestHandler } from 'express';
import { createFleetGauges, type FleetGauges } from './fleet-gauges';
import { matchRoute } from '../openapi/route-match';

/** The API's Prometheus series: counters the routes increment, and gauges read from the fleet at scrape time. */
export interface ApiMetrics {
  /** Always served. */
  registry: Registry;
  /** Served only when the last refresh could read the fleet (no stale or made-up zeros otherwise). */
  fleetRegistry: Registry;
  fleetUp: Gauge;
  /** Submissions refused at the door, by reason (queue_full, wait_too_long, rate_limited, budget_exhausted, draining). */
  sheds: Counter<'reason'>;
  /** Runs accepted at the door (batch items included), by priority. */
  submissions: Counter<'priority'>;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  fleet: FleetGauges;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  const fleetRegistry = new Registry();
  const registers = [registry];
  return {
    registry,
    fleetRegistry,
    fleetUp: new Gauge({
      name: 'fairway_fleet_up',
      help: '1 when the last scrape could read the scheduler status, else 0 (and the fleet series are absent).',
      registers,
    }),
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
      help: 'HTTP requests answered, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    fleet: createFleetGauges(fleetRegistry),
  };
}

export function countRequests(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    res.on('finish', () => {
      // A label per route template, never per URL.
      const route = matchRoute(path)?.template ?? 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

import type { RequestHandler } from 'express';
import { ApiError } from '../../contract/errors';
import { matchRoute } from '../openapi/route-match';

/** Paths whose answers are public and the same for everyone: they may be cached. */
const PUBLIC = new Set(['/healthz', '/openapi.json']);

/**
 * On every response: `X-Content-Type-Options: nosniff` (a JSON error is never sniffed into HTML), and
 * `Cache-Control: no-store` on all but the public paths, so no proxy or browser keeps an API key, a
 * run's result or the metrics.
 */
export const securityHeaders: RequestHandler = (req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (!PUBLIC.has(req.path)) res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * Methods no route serves and a proxy might reflect (TRACE echoes the request, cookies and keys included):
 * 405, with the Allow header RFC 9110 requires (the path's methods in the OpenAPI document; empty off it).
 */
const REFUSED = new Set(['TRACE', 'TRACK', 'CONNECT']);

export const refuseMethods: RequestHandler = (req, res, next) => {
  if (req.method === 'OPTIONS') {
    // Answered here for the whole path: the framework's own answer lists only the first router's methods.
    const route = matchRoute(req.path);
    if (route) {
      res.setHeader('Allow', route.methods.join(', '));
      res.status(204).end();
      return;
    }
  }
  if (REFUSED.has(req.method)) {
    res.setHeader('Allow', (matchRoute(req.path)?.methods ?? []).join(', '));
    next(new ApiError('method_not_allowed', `${req.method} is not allowed on this API.`));
    return;
  }
  next();
};

import type { RequestHandler } from 'express';

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

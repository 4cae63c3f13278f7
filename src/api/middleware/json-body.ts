import express, { type RequestHandler } from 'express';

/** Body limits: 1 MB for everything but batches, whose up to 10,000 items need room. */
export const BODY_LIMIT = '1mb';
export const BATCH_BODY_LIMIT = '16mb';

/** JSON bodies only; the limit depends on the route. Errors go to the one error middleware. */
export function jsonBody(): RequestHandler {
  const small = express.json({ limit: BODY_LIMIT });
  const large = express.json({ limit: BATCH_BODY_LIMIT });
  return (req, res, next) => {
    const isBatch =
      req.method === 'POST' &&
      `${req.baseUrl}${req.path}`.toLowerCase().replace(/\/+$/, '') === '/v1/batches';
    (isBatch ? large : small)(req, res, next);
  };
}

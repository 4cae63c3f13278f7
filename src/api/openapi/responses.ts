import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';

export type Responses = RouteConfig['responses'];

export const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const ERRORS: Record<number, string> = {
  400: 'invalid_request: details lists each bad field by path.',
  401: 'unauthorized: missing or unknown key.',
  403: 'forbidden: this key may not do that; tenant_disabled: an admin disabled this tenant.',
  404: 'not_found (or unknown_agent).',
  405: 'method_not_allowed: TRACE, TRACK and CONNECT are never served (Allow lists the methods that are).',
  408: 'The request was not received in full within HTTP_REQUEST_TIMEOUT_MS (answered by the HTTP server, no body).',
  409: 'conflict: the run is not in a state that allows this.',
  413: 'payload_too_large: the body, or the work it asks for as one Temporal payload (1.5 MiB), is too large.',
  415: 'unsupported_media_type: a body that is not application/json.',
  422: 'idempotency_conflict: the key was used with another body.',
  429: 'queue_full, wait_too_long, rate_limited or budget_exhausted; see Retry-After.',
  503: 'draining, unavailable (Temporal or the scheduler unreachable) or not_ready; see Retry-After.',
};

/** The error answers named by code, each with the JSON error body. */
export function errorResponses(error: z.ZodType, ...codes: number[]): Responses {
  return Object.fromEntries(codes.map((code) => [code, json(error, ERRORS[code] ?? 'Error.')]));
}

/**
 * What any route may answer besides its own: malformed paths, auth, limits, an unreachable fleet,
 * and what Node's HTTP server answers by itself (oversized headers, a request not received in time).
 */
export function commonResponses(error: z.ZodType, method: RouteConfig['method'], path: string): Responses {
  const codes = [400];
  if (path.startsWith('/v1/') || path === '/metrics') codes.push(401, 403);
  if (path.startsWith('/v1/')) codes.push(404, 429, 503);
  if (method === 'post' || method === 'put' || method === 'patch') codes.push(413, 415);
  return {
    ...errorResponses(error, ...codes),
    408: { description: ERRORS[408] ?? '' },
    431: { description: 'Request headers too large (answered by the HTTP server, no body).' },
  };
}

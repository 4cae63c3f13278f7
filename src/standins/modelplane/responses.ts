import type { Response } from 'express';

/**
 * Error bodies carry both the project's shape (`code`, `message`, `details`)
 * and OpenAI's (`type`), so the project's clients and OpenAI SDKs both read them.
 */
export function sendError(
  res: Response,
  status: number,
  error: { code: string; type: string; message: string; details?: unknown },
): void {
  res.status(status).json({ error });
}

/** Sends a 400 `invalid_request`. */
export function sendInvalid(res: Response, message: string, details?: unknown): void {
  sendError(res, 400, { code: 'invalid_request', type: 'invalid_request_error', message, details });
}

/** The wait a 429 advertises in `retry-after-ms`: whole ms, at least 1. */
export const advertisedWaitMs = (waitMs: number): number => Math.max(1, Math.ceil(waitMs));

/** Sends a rate-limit 429 with the wait in `retry-after` (whole seconds, at least 1) and `retry-after-ms`. */
export function sendThrottled(
  res: Response,
  waitMs: number,
  exhausted: string,
  limits: Record<string, string>,
): void {
  res.set(limits);
  res.set('retry-after', String(Math.max(1, Math.ceil(waitMs / 1000))));
  res.set('retry-after-ms', String(advertisedWaitMs(waitMs)));
  sendError(res, 429, {
    code: 'rate_limit_exceeded',
    type: 'rate_limit_exceeded',
    message: `Rate limit reached for ${exhausted} per minute. Please try again in ${Math.ceil(waitMs)}ms.`,
  });
}

/** Sends the spend-cap 429: no `retry-after`, because waiting does not help. */
export function sendSpendCap(res: Response, limits: Record<string, string>): void {
  res.set(limits);
  sendError(res, 429, {
    code: 'insufficient_quota',
    type: 'insufficient_quota',
    message: 'You exceeded your current quota, please check your plan and billing details.',
  });
}

/** Sends a scripted 429 whose headers (a drill's raw `retry-after`, reset…) are already set. */
export function sendInjected(res: Response, headers: Record<string, string>): void {
  res.set(headers);
  sendError(res, 429, {
    code: 'rate_limit_exceeded',
    type: 'rate_limit_exceeded',
    message: 'Rate limit reached (injected by a drill).',
  });
}

/** OpenAI's answers to a revoked key (401), a key without access (403) and a server fault (500). */
export function sendKeyRefused(res: Response, status: 401 | 403 | 500): void {
  if (status === 401)
    return sendError(res, 401, {
      code: 'invalid_api_key',
      type: 'invalid_request_error',
      message:
        'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
    });
  if (status === 403)
    return sendError(res, 403, {
      code: 'permission_denied',
      type: 'invalid_request_error',
      message: 'You have insufficient permissions for this operation.',
    });
  sendError(res, 500, {
    code: 'server_error',
    type: 'server_error',
    message: 'The server had an error while processing your request.',
  });
}

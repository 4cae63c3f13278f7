import type { Response } from 'express';
import { z } from 'zod';
import { anthropicError } from '../../activities/provider/anthropic-wire';
import type { DialectAnswers } from './call-flow';

const block = z.looseObject({ type: z.string() });

/** The part of an Anthropic Messages request the simulator reads; other fields are accepted and ignored. */
export const MessagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  system: z.union([z.string(), z.array(block)]).optional(),
  messages: z
    .array(
      z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block)]) }),
    )
    .min(1),
  tools: z
    .array(
      z.looseObject({
        name: z.string().min(1),
        description: z.string().optional(),
        input_schema: z.unknown().optional(),
      }),
    )
    .optional(),
  tool_choice: z.looseObject({ type: z.string(), name: z.string().optional() }).optional(),
  /** Anthropic's end-user id; Fairway sends the tenant, and the simulator bills by it. */
  metadata: z.looseObject({ user_id: z.string().max(256).optional() }).optional(),
});

/** Sends Anthropic's error shape. */
export function sendAnthropicError(res: Response, status: number, type: string, message: string): void {
  res.status(status).json(anthropicError(type, message));
}

/**
 * The Messages endpoint's refusals, as Anthropic sends them: 429 `rate_limit_error` with
 * `retry-after` in whole seconds (no `retry-after-ms`), 402 `billing_error` for the spend cap, 401
 * `authentication_error` and 403 `permission_error` for a refused key, 500 `api_error`.
 */
export function anthropicAnswers(body: (id: string) => unknown): DialectAnswers {
  return {
    dialect: 'anthropic',
    body,
    servedHeaders: (d) => ({ 'request-id': `req_${d.id}` }),
    spendCap(res, headers) {
      res.set(headers);
      sendAnthropicError(res, 402, 'billing_error', 'Your credit balance is too low to access the API.');
    },
    keyRefused(res, status) {
      if (status === 401) return sendAnthropicError(res, 401, 'authentication_error', 'invalid x-api-key');
      if (status === 403)
        return sendAnthropicError(
          res,
          403,
          'permission_error',
          'Your API key does not have permission to use the specified resource.',
        );
      sendAnthropicError(res, 500, 'api_error', 'Internal server error');
    },
    injected(res, headers) {
      res.set(headers);
      sendAnthropicError(res, 429, 'rate_limit_error', 'Rate limit reached (injected by a drill).');
    },
    throttled(res, waitMs, exhausted, headers) {
      res.set(headers);
      res.set('retry-after', String(Math.max(1, Math.ceil(waitMs / 1000))));
      sendAnthropicError(
        res,
        429,
        'rate_limit_error',
        `This request would exceed your organization's rate limit of ${exhausted} per minute.`,
      );
    },
    bareThrottled(res, message) {
      sendAnthropicError(res, 429, 'rate_limit_error', message);
    },
  };
}

import { z } from 'zod';

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** The part of an OpenAI chat-completions request the simulator reads; other fields are accepted and ignored. */
export const ChatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.string().min(1),
        content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
        tool_calls: z.array(toolCall).optional(),
        tool_call_id: z.string().optional(),
      }),
    )
    .min(1),
  max_tokens: z.number().int().positive().optional(),
  tools: z
    .array(
      z.looseObject({
        function: z.looseObject({
          name: z.string().min(1),
          description: z.string().optional(),
          parameters: z.unknown().optional(),
        }),
      }),
    )
    .optional(),
  tool_choice: z.unknown().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  /** OpenAI's end-user id; Fairway sends the tenant, and the simulator bills by it. */
  user: z.string().max(256).optional(),
});

export type ChatRequest = z.infer<typeof ChatRequestSchema>;

const quota = z.number().int().nonnegative();

/** `POST /admin/capacity`: a new quota, either or both. */
export const CapacitySchema = z
  .strictObject({
    tpm: quota.optional(),
    rpm: quota.optional(),
    inputTpm: quota.optional(),
    outputTpm: quota.optional(),
  })
  .refine((q) => Object.values(q).some((v) => v !== undefined), {
    message: 'give tpm, rpm, inputTpm or outputTpm',
  });

/** `POST /admin/spend-cap`: switch the hard spend cap on or off, for the account or one tenant. */
export const SpendCapSchema = z.strictObject({ enabled: z.boolean(), tenant: z.string().optional() });

/**
 * `POST /admin/rejected-key`: every call is refused for its key (401 by default, or 403) until it is
 * switched off; `status: 500` answers every call with a server error instead (an outage).
 */
export const RejectedKeySchema = z.strictObject({
  enabled: z.boolean(),
  status: z.union([z.literal(401), z.literal(403), z.literal(500)]).default(401),
});

/** `POST /admin/faults`: the next `times` calls are answered 429 with these raw header values. */
export const FaultSchema = z.strictObject({
  retryAfter: z.string().max(200).optional(),
  resetTokens: z.string().max(200).optional(),
  times: z.number().int().min(1).max(10_000).default(1),
});

/**
 * `POST /admin/drops`: the next `calls` are accepted and their connection closed without an answer,
 * `before` they are served (nothing billed) or `after` (billed, the answer lost); 0 stops it.
 */
export const DropsSchema = z.strictObject({
  calls: z.number().int().min(0).max(100_000),
  when: z.enum(['before', 'after']).default('before'),
});

/** `POST /admin/hold`: the longest a call over the limit is held before its 429 (0: refused at once). */
export const HoldSchema = z.strictObject({ ms: z.number().int().min(0).max(600_000) });

/** `POST /admin/headers`: whether answers carry rate-limit headers (false: a gateway that strips them). */
export const HeadersSchema = z.strictObject({ rateLimit: z.boolean() });

/** `POST /admin/wait-signal`: where rate-limit 429s state their wait (`WaitSignal`). */
export const WaitSignalSchema = z.strictObject({ mode: z.enum(['standard', 'vendor-header', 'body']) });

/** `POST /admin/bystander`: another consumer of the account at `tpm` tokens a minute (0 stops it). */
export const BystanderSchema = z.strictObject({
  tpm: quota,
  callTokens: z.number().int().min(20).max(100_000).default(500),
});

/** Each zod issue as `{path, message}`, for the `details` of a 400. */
export function issueDetails(error: z.ZodError): Array<{ path: string; message: string }> {
  return error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
}

import { z } from 'zod';

/** `GET /v1/admin/console`'s query and answer, for validation and the OpenAPI document. */
export const ConsoleQuerySchema = z.object({
  since: z
    .string()
    .regex(/^\d{1,15}$/, 'a non-negative integer (a sample seq)')
    .optional()
    .describe('Send only samples with a larger seq (the last seq the caller has).'),
});

const lanes = z.object({ interactive: z.number(), standard: z.number(), batch: z.number() });
const sheds = z.object({
  queue_full: z.number(),
  wait_too_long: z.number(),
  rate_limited: z.number(),
  budget_exhausted: z.number(),
  draining: z.number(),
});

export const ConsoleStateSchema = (status: z.ZodType) =>
  z.object({
    at: z.number().nullable().describe('ms since epoch of the last successful read'),
    error: z.string().nullable().describe('why the last read failed, or null'),
    sampleMs: z.int(),
    shareWindowMs: z.int(),
    status: status.nullable(),
    tenants: z.array(
      z.object({
        tenant: z.string(),
        weight: z.number(),
        tokenShare: z.number().nullable(),
        entitledShare: z.number().nullable(),
        tokensInWindow: z.number(),
        queued: z.int(),
        inFlight: z.int(),
        budget: z.number().nullable(),
        period: z.string(),
        spent: z.number(),
        remaining: z.number().nullable(),
        hint: z
          .object({ reason: z.enum(['budget', 'cap', 'lane', 'demand']), text: z.string() })
          .nullable()
          .describe('why the token share sits below the entitlement, or null'),
      }),
    ),
    samples: z.array(
      z.object({
        seq: z.int(),
        t: z.number(),
        mode: z.enum(['open', 'draining', 'drained']),
        inFlight: z.int(),
        queued: lanes,
        admissionsPerSecond: lanes.nullable(),
        servedTpm: z.number().nullable(),
        quotaTpm: z.number().nullable(),
        targetTpm: z.number(),
        throttledPerSecond: z.number().nullable(),
        shedsPerSecond: sheds.nullable(),
        tenantTokens: z.record(z.string(), z.number()),
      }),
    ),
  });

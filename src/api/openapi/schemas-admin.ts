import { z } from 'zod';
import type { SchedulerStatus, TenantStatus } from '../../scheduler/types';
import { byPriority } from './schemas';
import { BudgetSchema, TenantIdSchema } from '../intake/schemas';

/** Response schemas of tenants and operator endpoints for the OpenAPI document. */

export const TenantSettingsSchema = z.object({
  weight: z.number(),
  maxQueued: z.int(),
  maxInFlight: z.int(),
  budget: BudgetSchema,
  onBudgetExhausted: z.enum(['fail', 'park']).optional(),
  keyWeights: z.record(z.string(), z.number()).optional().meta({
    description: "Weights of the tenant's fairness keys against each other; a key not named weighs 1.",
  }),
});

export const TenantResponse = z.object({
  tenant: TenantIdSchema,
  settings: TenantSettingsSchema,
  disabled: z.boolean().meta({
    description:
      "Disabled: the tenant's keys and signed deliveries get 403 tenant_disabled; its queued runs wait.",
  }),
  approverKey: z.boolean().meta({
    description:
      "True when the tenant has an approver key: then only it (or the admin) approves or rejects the tenant's gates.",
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const TenantCreatedResponse = TenantResponse.extend({
  apiKey: z.string().meta({ description: 'Shown once; only its hash is kept.' }),
});
export const KeyRotatedResponse = z.object({ tenant: TenantIdSchema, apiKey: z.string() });
export const ApproverKeyResponse = z.object({ tenant: TenantIdSchema, approverKey: z.string() });

const ledgerView = z.object({
  budget: z.int().nullable(),
  period: BudgetSchema.shape.period,
  reserved: z.int(),
  spent: z.int(),
  remaining: z.int().nullable(),
  periodStart: z.string(),
}) satisfies z.ZodType<TenantStatus['ledger']>;

export const TenantMeResponse = z.object({
  tenant: z.string(),
  settings: TenantSettingsSchema,
  queued: z.object({ total: z.int(), byPriority }),
  inFlight: z.int(),
  ledger: ledgerView,
});

export const LedgerResponse = z.object({
  tenant: z.string(),
  entries: z.array(
    z.object({
      at: z.string(),
      tenant: z.string(),
      runId: z.string(),
      kind: z.enum(['reserve', 'settle', 'release', 'expire', 'rollover', 'charge', 'topup']),
      tokens: z.int(),
    }),
  ),
});

export const SchedulerStatusResponse = z.object({
  mode: z.enum(['open', 'draining', 'drained']),
  intake: z.enum(['open', 'refuse', 'hold']),
  inFlight: z.int(),
  queued: z.object({ total: z.int(), byPriority, byTenant: z.record(z.string(), z.int()) }),
  counters: z.object({
    submitted: z.int(),
    admitted: z.int(),
    completed: z.int(),
    failed: z.int(),
    cancelled: z.int(),
    shed: z.int(),
    expired: z.int(),
    admittedByPriority: byPriority,
    modelCalls: z.int(),
    throttled: z.int(),
    gated: z.int().meta({ description: 'Leases given back to wait for a human gate (not finished).' }),
    adopted: z
      .int()
      .meta({ description: 'Running runs taken back under a lease after the scheduler was lost.' }),
  }),
  config: z.object({
    concurrency: z.int(),
    floors: z.object({ standard: z.number(), batch: z.number() }),
    leaseTtlSeconds: z.int(),
    globalMaxQueued: z.int(),
    interactiveReserve: z.number().meta({
      description: 'Share of the slots in force kept free for interactive work (rounded up, never all).',
    }),
    reservedSlots: z
      .int()
      .meta({ description: 'Slots the interactive reserve keeps free at the cap in force.' }),
    maxWaitSeconds: z
      .object({ interactive: z.int().optional(), standard: z.int().optional(), batch: z.int().optional() })
      .optional()
      .meta({
        description:
          "Each lane's bound on a new unit's expected wait, in seconds; a longer one is shed with 429 wait_too_long. Absent: no lane has one.",
      }),
  }),
  governor: z.object({
    concurrencyLimit: z.number(),
    tokensPerMinute: z.number(),
    throttledRecently: z.boolean(),
    pausedUntil: z.string().nullable(),
    lastThrottleAt: z.string().nullable(),
    decreases: z.int(),
    increases: z.int(),
    providerTokensPerMinute: z
      .number()
      .optional()
      .meta({ description: "The provider's advertised tokens-per-minute limit, once a call reported it." }),
    servedTokensPerMinute: z
      .number()
      .optional()
      .meta({ description: 'Tokens per minute the provider served lately, once a call was reported.' }),
    providerRequestsPerMinute: z
      .number()
      .optional()
      .meta({ description: "The provider's advertised requests-per-minute limit, once a call reported it." }),
    requestBoundTokensPerMinute: z.number().optional().meta({
      description:
        'The request limit in tokens per minute at the tokens a call lately served; the governor paces on the lower of it and the token limit.',
    }),
    breaker: z
      .object({
        state: z.enum(['closed', 'open', 'half_open']),
        reason: z.enum(['key_refused', 'server_errors']).nullable(),
        since: z.string().nullable().meta({ description: 'When the breaker opened; null when closed.' }),
        nextProbeAt: z
          .string()
          .nullable()
          .meta({ description: 'When the next probe unit may be admitted; null when closed.' }),
        probes: z.int().meta({ description: 'Units admitted as probes while the breaker was open.' }),
        trips: z.int().meta({ description: 'Times the breaker opened.' }),
      })
      .optional()
      .meta({
        description:
          'The key breaker: open while the provider refuses the API key (401, 403, a key-level quota) or answers every call 5xx; admission is paused but for one probe unit per backoff, and a served call closes it.',
      }),
    congestion: z
      .object({
        baselineMs: z.number().meta({ description: 'Baseline latency of a served call, ms.' }),
        recentMs: z.number().meta({ description: 'Recent latency of a served call, ms.' }),
        since: z
          .string()
          .nullable()
          .meta({ description: 'Since when latency has been above GOVERNOR_LATENCY_FACTOR × its baseline.' }),
        congested: z
          .boolean()
          .meta({ description: 'Above it for GOVERNOR_LATENCY_SUSTAIN_SECONDS: admission is being slowed.' }),
      })
      .optional()
      .meta({
        description:
          'Latency of served calls against their baseline (a provider or gateway queueing calls); absent until a baseline is set.',
      }),
  }),
  history: z.object({ length: z.int(), continuedAsNew: z.int() }),
}) satisfies z.ZodType<SchedulerStatus>;

export const EffectsSummary = z.object({ effects: z.int(), attempts: z.int(), duplicates: z.int() });

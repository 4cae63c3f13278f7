import { z } from 'zod';
import { FAIRNESS_KEY_PATTERN, MAX_CONCURRENCY, MAX_KEY_WEIGHTS } from '../../scheduler/limits';
import { MAX_WAIT_BOUND_SECONDS } from '../../scheduler/fleet-settings';
import { PRIORITIES } from '../../scheduler/types';
import { RUN_STATUSES } from '../run-status';

/** Request schemas: the API's input types and the source of its OpenAPI document. */

export const TenantIdSchema = z
  .string()
  .regex(/^[a-z0-9-]{1,64}$/, 'A tenant id is 1–64 characters of a-z, 0-9 and "-".');

export const PrioritySchema = z.enum(PRIORITIES);
export const RunStatusSchema = z.enum(RUN_STATUSES);
export const IdempotencyKeySchema = z.string().min(1).max(255);
export const FairnessKeySchema = z
  .string()
  .regex(FAIRNESS_KEY_PATTERN, 'A fairness key is 1-64 characters of letters, digits and . _ : @ | / + = -.');

/**
 * Path ids of runs and batches, in the shapes the API mints: `run-<tenant>-<20 hex>` for a run,
 * `batch-<tenant>-<16 hex>-<index>` for a batch item's run, `batch-<tenant>-<16 hex>` for a batch.
 * Anything else cannot be one (the scheduler workflow, say), so it answers 404 without asking the fleet.
 */
export const RunIdSchema = z
  .string()
  .regex(/^(run-[a-z0-9-]{1,64}-[0-9a-f]{20}|batch-[a-z0-9-]{1,64}-[0-9a-f]{16}-(0|[1-9][0-9]{0,4}))$/);
export const BatchIdSchema = z.string().regex(/^batch-[a-z0-9-]{1,64}-[0-9a-f]{16}$/);

/** Upper bounds of a tenant's settings (docs/api.md): far above any real need, far below overflow. */
export const TENANT_MAXIMA = {
  weight: 1000,
  maxQueued: 1_000_000,
  maxInFlight: 10_000,
  budgetTokens: 1_000_000_000_000,
  keyWeight: 1000,
} as const;

export const BudgetSchema = z.strictObject({
  tokens: z.int().min(0).max(TENANT_MAXIMA.budgetTokens).nullable(),
  period: z.enum(['hour', 'day', 'month', 'none']),
});

export const TenantPutSchema = z.strictObject({
  weight: z.number().positive().max(TENANT_MAXIMA.weight).optional(),
  maxQueued: z.int().min(1).max(TENANT_MAXIMA.maxQueued).optional(),
  maxInFlight: z.int().min(1).max(TENANT_MAXIMA.maxInFlight).optional(),
  budget: BudgetSchema.optional(),
  /** `fail` (default): a run whose next step the budget cannot cover fails with budget_exhausted; `park`: it waits. */
  onBudgetExhausted: z.enum(['fail', 'park']).optional(),
  /**
   * Weights of the tenant's fairness keys against each other (a key not named weighs 1): they divide
   * the tenant's share, never add to it. Replaces the previous map; `{}` or null clears it.
   */
  keyWeights: z
    .record(FairnessKeySchema, z.number().positive().max(TENANT_MAXIMA.keyWeight))
    .refine((w) => Object.keys(w).length <= MAX_KEY_WEIGHTS, {
      message: `At most ${MAX_KEY_WEIGHTS} key weights.`,
    })
    // The document states what the validation holds keys and their count to.
    .meta({
      propertyNames: { type: 'string', pattern: FAIRNESS_KEY_PATTERN.source },
      maxProperties: MAX_KEY_WEIGHTS,
    })
    .nullable()
    .optional(),
});
export type TenantPut = z.output<typeof TenantPutSchema>;

export const RunRequestSchema = z.strictObject({
  agent: z.string().min(1).max(64),
  input: z.unknown(),
  priority: PrioritySchema.default('standard'),
  estimatedTokens: z.int().min(1).max(1_000_000_000).optional(),
  idempotencyKey: IdempotencyKeySchema.optional(),
  /** Who the run is for inside the tenant (an end user): the tenant's turns are shared between its keys by tokens. */
  fairnessKey: FairnessKeySchema.optional(),
});
export type RunRequest = z.output<typeof RunRequestSchema>;

export const BATCH_MAX_ITEMS = 10_000;

/** Each item's own fairness key in a batch or a part, aligned with its `items` (null: the batch's key). */
const ItemKeysSchema = z
  .array(FairnessKeySchema.nullable())
  .min(1)
  .max(BATCH_MAX_ITEMS)
  .optional()
  .meta({ description: "One per item, in the items' order; null: the batch's `fairnessKey`." });

export const BatchRequestSchema = z.strictObject({
  agent: z.string().min(1).max(64),
  priority: PrioritySchema.default('batch'),
  items: z.array(z.unknown()).min(1).max(BATCH_MAX_ITEMS),
  estimatedTokensPerItem: z.int().min(1).max(1_000_000_000).optional(),
  /** The fairness key of the batch's runs (see `RunRequestSchema`): those `fairnessKeys` does not name. */
  fairnessKey: FairnessKeySchema.optional(),
  /** Each item's own fairness key (one batch of many end users' jobs), aligned with `items`; null: `fairnessKey`. */
  fairnessKeys: ItemKeysSchema,
});
export type BatchRequest = z.output<typeof BatchRequestSchema>;

/** `POST /v1/batches/open`: a batch whose items come in parts (`…/items`), started by `…/commit`. */
export const BatchOpenRequestSchema = z.strictObject({
  agent: z.string().min(1).max(64),
  priority: PrioritySchema.default('batch'),
  estimatedTokensPerItem: z.int().min(1).max(1_000_000_000).optional(),
  /** The fairness key of the batch's runs: those its parts' `fairnessKeys` do not name. */
  fairnessKey: FairnessKeySchema.optional(),
});
export type BatchOpenRequest = z.output<typeof BatchOpenRequestSchema>;

/** `POST /v1/batches/:batchId/items`: part `part` (0, 1, 2, … in order) of an open batch's items. */
export const BatchPartRequestSchema = z.strictObject({
  part: z
    .int()
    .min(0)
    .max(BATCH_MAX_ITEMS - 1),
  items: z.array(z.unknown()).min(1).max(BATCH_MAX_ITEMS),
  /** Each of the part's items' own fairness key, aligned with its `items`; null: the batch's `fairnessKey`. */
  fairnessKeys: ItemKeysSchema,
});

export const DecisionRequestSchema = z.strictObject({
  gateId: z
    .int()
    .min(1)
    .max(1_000_000_000)
    .optional()
    .meta({
      description:
        "The gate decided: the run view's `gate.gateId`, or the approval's `gateId`. Another gate's (one decided " +
        'or timed out meanwhile) is 409. Optional only while the run has opened one gate.',
    }),
  note: z.string().max(2000).optional(),
});

const limit = (max: number, def: number) => z.coerce.number().int().min(1).max(max).default(def);

/** An instant in a list filter: ISO 8601 with a time zone, as the API writes `createdAt`. */
const InstantSchema = z.iso.datetime({ offset: true });

export const RunListQuerySchema = z.object({
  status: RunStatusSchema.optional(),
  priority: PrioritySchema.optional(),
  limit: limit(500, 50),
  cursor: z.string().min(1).max(2000).optional(),
  /** Admin only: restrict the list to one tenant. */
  tenant: TenantIdSchema.optional(),
  agent: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'an agent name')
    .optional()
    .describe('Only runs of this agent (runs started before this filter existed carry no agent to match).'),
  idempotencyKey: IdempotencyKeySchema.optional().describe(
    "The run submitted with this Idempotency-Key, while the key's record is kept (the admin names `tenant` too).",
  ),
  createdAfter: InstantSchema.optional().describe('Only runs started at or after this instant.'),
  createdBefore: InstantSchema.optional().describe('Only runs started before this instant.'),
});

/** GET /v1/approvals: each entry reads its run's view, so a page is small. */
export const ApprovalListQuerySchema = z.object({
  limit: limit(50, 20),
  cursor: z.string().min(1).max(2000).optional(),
  /** Admin only: restrict the list to one tenant. */
  tenant: TenantIdSchema.optional(),
});

export const LedgerQuerySchema = z.object({ limit: limit(1000, 100) });

/** One lane's wait bound in a patch: whole seconds up to a day, or null to remove it. */
const waitBound = z.int().min(1).max(MAX_WAIT_BOUND_SECONDS).nullable().optional();

export const SchedulerPatchSchema = z
  .strictObject({
    concurrency: z.int().min(1).max(MAX_CONCURRENCY).optional(),
    floors: z
      .strictObject({
        standard: z.number().min(0).max(0.5).optional(),
        batch: z.number().min(0).max(0.5).optional(),
      })
      .refine(
        (f) => f.standard !== undefined || f.batch !== undefined,
        'Give floors.standard, floors.batch or both.',
      )
      .meta({ minProperties: 1 })
      .optional(),
    leaseTtlSeconds: z.int().min(5).max(86_400).optional(),
    interactiveReserve: z.number().min(0).max(0.5).optional(),
    maxWaitSeconds: z
      .strictObject({
        interactive: waitBound,
        standard: waitBound,
        batch: waitBound,
      })
      .refine(
        (w) => w.interactive !== undefined || w.standard !== undefined || w.batch !== undefined,
        'Give maxWaitSeconds.interactive, .standard, .batch or several.',
      )
      .meta({
        minProperties: 1,
        description:
          "A lane's bound on a new unit's expected wait, in seconds (null removes it): a longer expected wait is shed with 429 wait_too_long.",
      })
      .optional(),
  })
  .refine(
    (p) =>
      p.concurrency !== undefined ||
      p.floors !== undefined ||
      p.leaseTtlSeconds !== undefined ||
      p.interactiveReserve !== undefined ||
      p.maxWaitSeconds !== undefined,
    'Give at least one of concurrency, floors, leaseTtlSeconds, interactiveReserve, maxWaitSeconds.',
  )
  .meta({ minProperties: 1 });

export const DrainRequestSchema = z.strictObject({ intake: z.enum(['refuse', 'hold']).default('refuse') });

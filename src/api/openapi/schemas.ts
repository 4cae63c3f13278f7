import { z } from 'zod';
import type { BatchView, RunListItem, RunStep, RunView } from '../../contract/fleet-port';
import { WAIT_CODES } from '../../scheduler/types';
import { PrioritySchema, RunStatusSchema } from '../intake/schemas';

/** Response schemas of runs and batches for the OpenAPI document; `satisfies` keeps them in step with the fleet's types. */

export const byPriority = z.object({ interactive: z.int(), standard: z.int(), batch: z.int() });
const links = z.object({ self: z.string() });

export const ErrorResponse = z.object({
  error: z.object({
    code: z.string().meta({ example: 'invalid_request' }),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});

const waitingOn = z.object({
  code: z.enum(WAIT_CODES),
  message: z.string(),
  position: z.int().optional(),
  lane: PrioritySchema,
  fairnessKey: z
    .string()
    .optional()
    .meta({ description: "The run's fairness key; absent: the tenant's default." }),
  keyPosition: z
    .object({
      keysAhead: z
        .int()
        .meta({ description: 'Other keys of the tenant whose next run goes before this one.' }),
      keysQueued: z
        .int()
        .meta({ description: 'Keys of the tenant with runs queued in this lane, its own included.' }),
      unitsAheadInKey: z.int(),
      unitsAheadInTenant: z.int(),
      bucket: z.string().optional().meta({ description: 'The hashed bucket the key shares past the bound.' }),
    })
    .optional(),
});

export const RunViewResponse = z.object({
  runId: z.string(),
  tenant: z.string(),
  agent: z.string(),
  priority: PrioritySchema,
  status: RunStatusSchema,
  createdAt: z.string(),
  admittedAt: z.string().nullable(),
  admissionSeq: z.int().nullable(),
  finishedAt: z.string().nullable(),
  usage: z.object({ tokens: z.int() }),
  waitingOn: waitingOn.nullable(),
  result: z.unknown(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  batchId: z.string().nullable(),
  fairnessKey: z
    .string()
    .nullable()
    .optional()
    .meta({ description: "Who the run is for inside its tenant; null: the tenant's default key." }),
  toolCalls: z.array(
    z.object({
      tool: z.string(),
      identity: z.string().nullable().meta({ description: 'tool:<name>#<key id>; never the credential' }),
      outcome: z.enum(['ok', 'refused', 'failed']),
      at: z.string(),
      reason: z.string().optional(),
    }),
  ),
  gate: z
    .object({
      gateId: z.int().meta({
        description:
          "The gate's sequence in the run (1 for its first): a decision names the gate it decides by it.",
      }),
      proposal: z.unknown().meta({ description: 'What the approver is asked to approve (JSON).' }),
      openedAt: z.string(),
      timeoutSeconds: z.number().nullable(),
      onTimeout: z.enum(['approve', 'reject', 'escalate']),
      decision: z.enum(['approve', 'reject']).optional(),
      decidedBy: z.string().optional(),
      decidedAt: z.string().optional(),
      note: z.string().optional(),
      timedOut: z.literal(true).optional(),
      outcome: z.enum(['approve', 'reject', 'escalate']).optional(),
    })
    .optional(),
}) satisfies z.ZodType<RunView>;

export const RunAccepted = z.object({ runId: z.string(), status: RunStatusSchema, links });
export const RunReplayed = RunViewResponse.partial().extend(RunAccepted.shape);

export const RunList = z.object({
  items: z.array(
    z.object({
      runId: z.string(),
      tenant: z.string(),
      agent: z.string(),
      priority: PrioritySchema,
      status: RunStatusSchema,
      createdAt: z.string(),
      batchId: z.string().nullable(),
    }) satisfies z.ZodType<RunListItem>,
  ),
  nextCursor: z.string().nullable(),
});

export const RunSteps = z.object({
  runId: z.string(),
  items: z.array(
    z.object({
      kind: z.enum(['step', 'model', 'effect']),
      name: z.string().meta({ description: "The step's number, the model asked for, or the effect's name." }),
      tokens: z
        .number()
        .nullable()
        .meta({ description: 'Tokens charged; null while running, or for an effect.' }),
      outcome: z.enum(['ok', 'failed', 'running', 'applied', 'duplicate']),
      error: z.string().optional(),
      at: z.string().meta({ description: 'When it was scheduled (ISO 8601).' }),
    }) satisfies z.ZodType<RunStep>,
  ),
});

export const CancelAccepted = z.object({ runId: z.string(), cancelRequested: z.literal(true), links });
export const DecisionResponse = z.object({
  runId: z.string(),
  gateId: z.int().optional().meta({ description: 'The gate decided.' }),
  decision: z.enum(['approved', 'rejected']),
  by: z
    .string()
    .meta({ description: 'Who decided: key:<tenant>#<key id> for a tenant key, admin for the admin token.' }),
  at: z.string().meta({ description: 'When the API took the decision (ISO 8601).' }),
  links,
});

const onTimeout = z.enum(['approve', 'reject', 'escalate']);

export const AgentResponse = z.object({
  name: z.string(),
  description: z.string().nullable(),
  input: z.record(z.string(), z.unknown()).meta({
    description: "The input's JSON Schema (draft 2020-12), as a client sends it (before defaults).",
  }),
  tools: z.array(z.string()),
  effects: z.array(z.string()),
  gate: z.object({ timeoutSeconds: z.int(), onTimeout }).nullable(),
  estimate: z.union([
    z.object({ kind: z.literal('fixed'), tokens: z.number() }),
    z.object({ kind: z.literal('input').meta({ description: "Computed from each run's input." }) }),
  ]),
  served: z
    .boolean()
    .nullable()
    .meta({
      description:
        "Whether a worker polled the agent's task queue lately (null: Temporal could not be asked). A run of an " +
        'agent not served is still accepted: it waits for a worker.',
    }),
  links,
});

export const ApprovalItem = z.object({
  runId: z.string(),
  tenant: z.string(),
  agent: z.string(),
  priority: PrioritySchema,
  createdAt: z.string(),
  gateId: z
    .int()
    .nullable()
    .meta({
      description:
        'The waiting gate, to send with the decision (`{"gateId"}`): a decision for another gate is 409. Null for a ' +
        'run whose view numbers no gate (an older worker).',
    }),
  proposal: z.unknown().meta({ description: 'What is to be approved, as the agent proposed it (JSON).' }),
  openedAt: z.string().nullable(),
  timeout: z.object({ seconds: z.int(), onTimeout, expiresAt: z.string().nullable() }).nullable(),
  links: z.object({ run: z.string(), approve: z.string(), reject: z.string() }),
});
export const ApprovalList = z.object({ items: z.array(ApprovalItem), nextCursor: z.string().nullable() });

export const BatchAccepted = z.object({ batchId: z.string(), total: z.int(), links });
export const BatchViewResponse = z.object({
  batchId: z.string(),
  tenant: z.string(),
  total: z.int(),
  queued: z.int(),
  running: z.int(),
  completed: z.int(),
  failed: z.int(),
  cancelled: z.int(),
  /** `open`: sent in parts, still taking parts; `committed`: closed (its runs are being created or exist). */
  state: z.enum(['open', 'committed']),
}) satisfies z.ZodType<BatchView>;
const partLinks = z.object({ self: z.string(), items: z.string(), commit: z.string() });
export const BatchOpened = z.object({
  batchId: z.string(),
  state: z.literal('open'),
  total: z.int(),
  parts: z.int(),
  links: partLinks,
});
export const BatchPartAccepted = z.object({
  batchId: z.string(),
  part: z.int(),
  /** The batch index of the part's first item (its run id is `<batchId>-<index>`). */
  firstIndex: z.int(),
  count: z.int(),
  /** Items in the batch so far. */
  total: z.int(),
  /** True when this part had been appended before (a retry): nothing was appended twice. */
  replayed: z.boolean(),
  links: partLinks,
});
export const BatchResumed = z.object({ batchId: z.string(), resumed: z.int(), links });

import { z } from 'zod';
import type { BatchView, RunListItem, RunView } from '../../contract/fleet-port';
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

export const CancelAccepted = z.object({ runId: z.string(), cancelRequested: z.literal(true), links });
export const DecisionResponse = z.object({
  runId: z.string(),
  decision: z.enum(['approved', 'rejected']),
  links,
});

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

import { z } from 'zod';
import { FairnessKeySchema, PrioritySchema } from './schemas';

/** Request schemas of events, triggers and webhook secrets (docs/api.md, "Events and triggers"). */

/** No control characters (an event's key joins its id and source with U+001F). */
const hasNoControl = (v: string) => ![...v].some((ch) => ch.charCodeAt(0) < 0x20 || ch === '\u007f');
const printable = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine(hasNoControl, 'No control characters.')
    // What the refinement checks, for the OpenAPI document.
    .meta({ pattern: '^[^\\u0000-\\u001f\\u007f]+$' });
const SourceSchema = printable(1000);

/** A CloudEvents 1.0 event in structured JSON mode; extension attributes are accepted and ignored. */
export const CloudEventSchema = z.object({
  id: printable(255),
  type: z.string().min(1).max(255),
  source: SourceSchema,
  specversion: z.literal('1.0').default('1.0'),
  time: z.iso.datetime({ offset: true }).optional(),
  data: z.unknown().optional(),
});

export const TriggerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'A trigger name is 1–64 characters of A-Z, a-z, 0-9, ".", "_" and "-".');

const DOTTED_PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){0,15}$/;
const DottedPathSchema = z
  .string()
  .regex(DOTTED_PATH, 'A filter key is a dotted path such as "data.service.name".');
const MAX_FILTER_ENTRIES = 20;

export const TriggerPutSchema = z.strictObject({
  eventType: z.string().min(1).max(255),
  filter: z
    .record(DottedPathSchema, z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .refine(
      (f) => Object.keys(f).length <= MAX_FILTER_ENTRIES,
      `At most ${MAX_FILTER_ENTRIES} filter entries.`,
    )
    // What the record's key schema and the refinement check, for the OpenAPI document.
    .meta({ propertyNames: { pattern: DOTTED_PATH.source }, maxProperties: MAX_FILTER_ENTRIES })
    .default({}),
  sources: z.array(SourceSchema).min(1).max(20).optional(),
  agent: z.string().min(1).max(64),
  priority: PrioritySchema.default('standard'),
  input: z.unknown().optional(),
  estimatedTokens: z.int().min(1).max(1_000_000_000).optional(),
  /** The runs' fairness key: a fixed key, or `{{path}}` to take it from the event (`{{data.userId}}`). */
  fairnessKey: z
    .union([
      FairnessKeySchema,
      z.string().regex(/^\{\{[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){0,15}\}\}$/, 'A path is "{{data.userId}}".'),
    ])
    .optional(),
});
export type TriggerPut = z.output<typeof TriggerPutSchema>;

export const WebhookSecretPostSchema = z.strictObject({ source: SourceSchema });

export const EventIdSchema = z.string().min(1).max(255);

export const EVENT_OUTCOMES = [
  'no_match',
  'pending',
  'retrying',
  'started',
  'refused',
  'invalid_input',
] as const;
export type EventOutcome = (typeof EVENT_OUTCOMES)[number];

export const EventListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  outcome: z.enum(EVENT_OUTCOMES).optional(),
});

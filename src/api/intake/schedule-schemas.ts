import { z } from 'zod';
import { OVERLAP_POLICIES, SCHEDULE_NAME } from '../../contract/schedules';
import { FairnessKeySchema, PrioritySchema, TenantIdSchema } from './schemas';

/** Request schemas of /v1/schedules. */

export const ScheduleNameSchema = z
  .string()
  .regex(SCHEDULE_NAME, 'A schedule name is 1–64 characters of A-Z, a-z, 0-9, "_", "." and "-".');

/** The longest interval (a year). */
export const MAX_INTERVAL_SECONDS = 366 * 24 * 3600;
/** The shortest interval a deployment allows by default (SCHEDULE_MIN_INTERVAL_SECONDS): cron's own step. */
export const MIN_SCHEDULE_INTERVAL_SECONDS = 60;

/** Five to seven fields (minute hour day month weekday, with optional seconds and years), or a macro. */
const CRON =
  /^(@(yearly|annually|monthly|weekly|daily|hourly)|[0-9A-Za-z*/,?#-]+( [0-9A-Za-z*/,?#-]+){4,6})$/;

/** The body's fields; {@link SchedulePutSchema} adds the rule that exactly one timing is given. */
export const ScheduleBodySchema = z.strictObject({
  agent: z.string().min(1).max(64),
  input: z.unknown(),
  priority: PrioritySchema.default('standard'),
  estimatedTokens: z.int().min(1).max(1_000_000_000).optional(),
  /** Its runs' fairness key inside the tenant (an end user, say), as on POST /v1/runs. */
  fairnessKey: FairnessKeySchema.optional(),
  /** A cron expression, in UTC (`0 3 * * *`: 03:00 every day). Exactly one of `cron` and `intervalSeconds`. */
  cron: z
    .string()
    .max(200)
    .regex(CRON, 'A cron expression is 5–7 space-separated fields (UTC), or @daily, @hourly, …')
    .optional(),
  /** Fires every this many seconds. */
  intervalSeconds: z.int().min(1).max(MAX_INTERVAL_SECONDS).optional(),
  /** What a firing does while the previous firing's run is still going; default `skip`. */
  overlap: z.enum(OVERLAP_POLICIES).default('skip'),
  /** Paused by its tenant: it fires only when triggered, and a resume after a drain leaves it paused. */
  paused: z.boolean().default(false),
});

export const SchedulePutSchema = ScheduleBodySchema.refine(
  (s) => (s.cron === undefined) !== (s.intervalSeconds === undefined),
  {
    path: ['cron'],
    message: 'Give exactly one of cron and intervalSeconds.',
  },
);
export type SchedulePut = z.output<typeof SchedulePutSchema>;

/** The tenant a schedule route acts for: the caller's own, or (admin token) the one named here. */
export const ScheduleOwnerQuerySchema = z.object({ tenant: TenantIdSchema.optional() });

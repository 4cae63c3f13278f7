import type { Priority, Refusal } from '../scheduler/types';
import type { ErrorCode } from './errors';
import type { RunStatus } from './fleet-port';

/**
 * Schedules: a tenant's named, recurring run (cron or interval) on a Temporal Schedule. Each firing
 * starts `scheduledRunWorkflow`, which offers the run the way POST /v1/runs does (queued, fair,
 * budgeted, refused with the same codes), under a run id derived from the firing's workflow id.
 */

/** What happens when a firing comes while the previous firing's run is still going. */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** The run each firing offers: validated against the agent's input schema when the schedule was put. */
export interface ScheduledRunTemplate {
  tenant: string;
  agent: string;
  priority: Priority;
  input: unknown;
  estimatedTokens: number;
  /** The model pool of its runs, as the API found it when the schedule was put; absent: the default pool. */
  pool?: string;
  /** Its runs' fairness key inside the tenant; absent: the tenant's default key. */
  fairnessKey?: string;
}

/** When a schedule fires: exactly one of a cron expression (UTC) and an interval. */
export type ScheduleTiming = { cron: string } | { intervalSeconds: number };

/**
 * The firing workflow's input: the run's template and the schedule as its tenant wrote it (Temporal
 * keeps a cron as calendars, and a schedule's memo cannot change: the schedule is read back from here).
 */
export interface ScheduledRunJob extends ScheduledRunTemplate {
  scheduleId: string;
  name: string;
  timing: ScheduleTiming;
  overlap: OverlapPolicy;
}

/** A schedule as its tenant writes it (PUT /v1/schedules/:name). */
export interface ScheduleDefinition {
  agent: string;
  input: unknown;
  priority: Priority;
  estimatedTokens: number;
  /** Its runs' fairness key inside the tenant; absent: the tenant's default key. */
  fairnessKey?: string;
  timing: ScheduleTiming;
  overlap: OverlapPolicy;
  /** Paused by its tenant (a drain's pause is separate: see {@link DRAIN_NOTE}). */
  paused: boolean;
}

/** One firing, as the schedule remembers it. */
export interface ScheduleAction {
  scheduledAt: string;
  takenAt: string;
  /** The firing's workflow (`scheduledRunWorkflow`), in the Temporal Web UI. */
  workflowId: string;
}

/** A schedule as GET /v1/schedules/:name answers it. */
export interface ScheduleView {
  name: string;
  tenant: string;
  scheduleId: string;
  agent: string;
  input: unknown;
  priority: Priority;
  estimatedTokens: number;
  /** Its runs' fairness key; null: the tenant's default key. */
  fairnessKey: string | null;
  cron: string | null;
  intervalSeconds: number | null;
  overlap: OverlapPolicy;
  /** `tenant`: its tenant paused it; `drain`: the fleet is drained (resume unpauses it); null: running. */
  paused: 'tenant' | 'drain' | null;
  recentActions: ScheduleAction[];
  nextActionTimes: string[];
  actionsTaken: number;
  actionsSkippedOverlap: number;
}

/** The part of a schedule's view its definition (or the job a firing carries) decides. */
export function definedFields(
  d: Pick<
    ScheduleDefinition,
    'agent' | 'input' | 'priority' | 'estimatedTokens' | 'fairnessKey' | 'timing' | 'overlap'
  >,
): Pick<
  ScheduleView,
  'agent' | 'input' | 'priority' | 'estimatedTokens' | 'fairnessKey' | 'cron' | 'intervalSeconds' | 'overlap'
> {
  return {
    agent: d.agent,
    input: d.input,
    priority: d.priority,
    estimatedTokens: d.estimatedTokens,
    fairnessKey: d.fairnessKey ?? null,
    cron: 'cron' in d.timing ? d.timing.cron : null,
    intervalSeconds: 'intervalSeconds' in d.timing ? d.timing.intervalSeconds : null,
    overlap: d.overlap,
  };
}

/** What the API needs of schedules; production implements it on Temporal Schedules. */
export interface SchedulesPort {
  /** Creates or replaces the schedule; `drained`: created (or kept) paused by the drain. */
  put(
    tenant: string,
    name: string,
    def: ScheduleDefinition,
    opts: { drained: boolean },
  ): Promise<{ created: boolean; view: ScheduleView }>;
  get(tenant: string, name: string): Promise<ScheduleView | null>;
  /** The fleet's schedules (one tenant's, when named), by name. Eventually consistent (Temporal's list). */
  list(tenant?: string): Promise<ScheduleView[]>;
  /** False when there was no such schedule. */
  delete(tenant: string, name: string): Promise<boolean>;
  /** Fires it now (its overlap policy applies); false when there is no such schedule. */
  trigger(tenant: string, name: string): Promise<boolean>;
  /** Pauses every running schedule of the fleet with {@link DRAIN_NOTE}; returns how many. */
  pauseForDrain(): Promise<number>;
  /** Unpauses the schedules the drain paused (never those their tenant paused); returns how many. */
  resumeAfterDrain(): Promise<number>;
}

/** The note of a schedule the drain paused: resume unpauses exactly these. */
export const DRAIN_NOTE = 'paused by drain';
/** The note of a schedule its tenant paused. */
export const TENANT_NOTE = 'paused by its tenant';

/** Schedule names: 1–64 characters of letters, digits, `_`, `.` and `-` (no `:`, which ids use). */
export const SCHEDULE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The Temporal Schedule id of a tenant's schedule in the fleet `scope` (its scheduler workflow id). */
export const scheduleIdOf = (scope: string, tenant: string, name: string): string =>
  `fairway-schedule:${scope}:${tenant}:${name}`;

/** The tenant and name of a schedule id of the fleet `scope`, or null for any other id. */
export function parseScheduleId(scope: string, id: string): { tenant: string; name: string } | null {
  const prefix = `fairway-schedule:${scope}:`;
  if (!id.startsWith(prefix)) return null;
  const [tenant, name, ...rest] = id.slice(prefix.length).split(':');
  return tenant && name && rest.length === 0 ? { tenant, name } : null;
}

/** How one firing ended: the run it offered, or why none was. */
export type ScheduledRunOutcome =
  | { state: 'accepted'; runId: string; held: boolean; status?: RunStatus }
  | { state: 'finished'; runId: string }
  | { state: 'refused'; runId: string; code: ErrorCode; message: string; retryAfterSeconds: number };

/** The error code a scheduler refusal answers with at the door (POST /v1/runs) and in a firing's outcome. */
export function refusalCode(refusal: Pick<Refusal, 'code'>): ErrorCode {
  // unknown_tenant: the scheduler lost the tenant for a moment; invalid_unit: a unit the scheduler
  // does not take (a defect of ours, not the client's).
  if (refusal.code === 'unknown_tenant') return 'unavailable';
  if (refusal.code === 'invalid_unit') return 'internal';
  return refusal.code;
}

/** The activities of a firing (types only, for `proxyActivities`). */
export interface ScheduledRunActivities {
  /** Offers the firing's run (idempotent: a retried firing offers the same run id). */
  submitScheduledRun(job: ScheduledRunJob): Promise<ScheduledRunOutcome>;
  /** Waits until the run closes (heartbeating); returns its status. */
  awaitScheduledRun(runId: string): Promise<RunStatus>;
  /** Asks the run to cancel (a newer firing under `cancel_other`). */
  cancelScheduledRun(runId: string): Promise<void>;
}

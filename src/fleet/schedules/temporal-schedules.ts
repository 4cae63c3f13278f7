import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  ServiceError,
} from '@temporalio/client';
import type { Client, ScheduleDescription, ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { ApiError } from '../../contract/errors';
import {
  DRAIN_NOTE,
  TENANT_NOTE,
  definedFields,
  parseScheduleId,
  scheduleIdOf,
} from '../../contract/schedules';
import type {
  OverlapPolicy,
  ScheduleDefinition,
  ScheduledRunJob,
  ScheduleView,
  SchedulesPort,
} from '../../contract/schedules';
import type { scheduledRunWorkflow } from '../../workflows/scheduled-run';
import { mapLimit } from '../../util/map-limit';

const OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** A firing missed by more than this (Temporal was away) is skipped, not caught up. */
const CATCHUP_WINDOW = '1 minute';

const orNull = <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((err: unknown) => (err instanceof ScheduleNotFoundError ? null : Promise.reject(err)));

/**
 * Temporal refuses a spec it cannot parse (a cron field out of range): the SDK rethrows that
 * INVALID_ARGUMENT as a TypeError with the server's reason; any other INVALID_ARGUMENT as a
 * ServiceError whose cause has code 3. Both are the request's fault, a 400 at `cron`.
 */
function invalidSpec(err: unknown): ApiError | null {
  const cause = err instanceof ServiceError ? (err.cause as { code?: unknown } | undefined) : undefined;
  if (!(err instanceof TypeError) && cause?.code !== 3) return null;
  const message = err instanceof Error ? err.message : String(err);
  return ApiError.invalid([{ path: 'cron', message: `Temporal refused the schedule: ${message}` }]);
}

function pausedBy(d: Pick<ScheduleDescription, 'state'>): ScheduleView['paused'] {
  if (!d.state.paused) return null;
  return d.state.note === DRAIN_NOTE ? 'drain' : 'tenant';
}

function viewOf(d: ScheduleDescription): ScheduleView | null {
  const job = d.action.args?.[0] as ScheduledRunJob | undefined;
  if (!job || d.action.workflowType !== 'scheduledRunWorkflow') return null;
  return {
    name: job.name,
    tenant: job.tenant,
    scheduleId: d.scheduleId,
    ...definedFields(job),
    paused: pausedBy(d),
    recentActions: d.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      takenAt: a.takenAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
    nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    actionsTaken: d.info.numActionsTaken,
    actionsSkippedOverlap: d.info.numActionsSkippedOverlap,
  };
}

/**
 * Schedules on Temporal Schedules: one per (tenant, name), id `fairway-schedule:<fleet>:<tenant>:<name>`
 * (the fleet is its scheduler workflow id, so fleets sharing a namespace never see each other's). Its
 * action starts `scheduledRunWorkflow` on the fleet's base task queue; its pause note says who paused
 * it, so a resume unpauses only what the drain paused.
 */
export function createTemporalSchedules(
  client: Client,
  opts: {
    scope: string;
    taskQueue: string;
    /** The model pool of an agent's runs (`agentPool`); default: the default pool. */
    poolOf?: (agent: string) => string | undefined;
  },
): SchedulesPort {
  const idOf = (tenant: string, name: string) => scheduleIdOf(opts.scope, tenant, name);
  const describe = (id: string) => orNull(client.schedule.getHandle(id).describe());
  /** The fleet's schedule ids (one tenant's, when named), from Temporal's eventually consistent list. */
  const ids = async (tenant?: string): Promise<string[]> => {
    const out: string[] = [];
    for await (const s of client.schedule.list()) {
      const parsed = parseScheduleId(opts.scope, s.scheduleId);
      if (parsed && (tenant === undefined || parsed.tenant === tenant)) out.push(s.scheduleId);
    }
    return out.sort();
  };

  const port: SchedulesPort = {
    async put(tenant, name, def: ScheduleDefinition, { drained }) {
      const scheduleId = idOf(tenant, name);
      const pool = opts.poolOf?.(def.agent);
      const job: ScheduledRunJob = {
        scheduleId,
        name,
        tenant,
        agent: def.agent,
        priority: def.priority,
        input: def.input,
        estimatedTokens: def.estimatedTokens,
        ...(def.fairnessKey !== undefined ? { fairnessKey: def.fairnessKey } : {}),
        timing: def.timing,
        overlap: def.overlap,
        ...(pool !== undefined ? { pool } : {}),
      };
      const action: ScheduleOptionsStartWorkflowAction<typeof scheduledRunWorkflow> = {
        type: 'startWorkflow',
        workflowType: 'scheduledRunWorkflow',
        // Temporal appends each firing's scheduled time: the firing's id, and so its run's, is unique.
        workflowId: scheduleId,
        taskQueue: opts.taskQueue,
        args: [job],
      };
      const spec =
        'cron' in def.timing
          ? { cronExpressions: [def.timing.cron] }
          : { intervals: [{ every: def.timing.intervalSeconds * 1000 }] };
      const policies = { overlap: OVERLAP[def.overlap], catchupWindow: CATCHUP_WINDOW };
      // The tenant's pause outlasts a resume; otherwise a drained fleet's schedule starts paused by it.
      const state = def.paused
        ? { paused: true, note: TENANT_NOTE }
        : drained
          ? { paused: true, note: DRAIN_NOTE }
          : { paused: false, note: '' };
      let created = true;
      try {
        await client.schedule.create({ scheduleId, spec, action, policies, state });
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning)) throw invalidSpec(err) ?? err;
        created = false;
        await client.schedule
          .getHandle(scheduleId)
          .update(() => ({ spec, action, policies, state }))
          .catch((e: unknown) => Promise.reject(invalidSpec(e) ?? e));
      }
      const d = await describe(scheduleId);
      const view = d ? viewOf(d) : null;
      if (!view) throw new Error(`schedule ${scheduleId} vanished as it was written`);
      return { created, view };
    },

    async get(tenant, name) {
      const d = await describe(idOf(tenant, name));
      const view = d ? viewOf(d) : null;
      return view && view.tenant === tenant ? view : null;
    },

    async list(tenant) {
      const found = await mapLimit(await ids(tenant), 8, (id) => describe(id));
      return found.flatMap((d) => {
        const view = d ? viewOf(d) : null;
        return view ? [view] : [];
      });
    },

    async delete(tenant, name) {
      return (await orNull(client.schedule.getHandle(idOf(tenant, name)).delete())) !== null;
    },

    async trigger(tenant, name) {
      return (await orNull(client.schedule.getHandle(idOf(tenant, name)).trigger())) !== null;
    },

    async pauseForDrain() {
      // Each one described first: the list may be stale, and a tenant's own pause is left as it is.
      const paused = await mapLimit(await ids(), 8, async (id) => {
        const d = await describe(id);
        if (!d || d.state.paused) return false;
        return (await orNull(client.schedule.getHandle(id).pause(DRAIN_NOTE))) !== null;
      });
      return paused.filter(Boolean).length;
    },

    async resumeAfterDrain() {
      const resumed = await mapLimit(await ids(), 8, async (id) => {
        const d = await describe(id);
        if (!d || pausedBy(d) !== 'drain') return false;
        // A patch's empty note means "no unpause": it must say something.
        return (await orNull(client.schedule.getHandle(id).unpause('unpaused by resume'))) !== null;
      });
      return resumed.filter(Boolean).length;
    },
  };
  return port;
}

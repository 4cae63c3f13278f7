import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { RunStatus, RunView } from '../contract/fleet-port';
import { offerRuns } from '../contract/offer-runs';
import { signalRun } from './wake-run';
import type { RunOfferPorts } from '../contract/offer-runs';
import { cancelRunSignal } from '../contract/run-messages';
import { submitUpdate, upsertTenantsUpdate } from '../contract/scheduler-messages';
import { refusalCode } from '../contract/schedules';
import type { ScheduledRunActivities, ScheduledRunOutcome } from '../contract/schedules';
import type { TenantRecord } from '../stores/tenants/tenants';
import { schedulerSettings } from '../stores/tenants/tenants';
import { schedulerUpdates } from './scheduler-updates';
import type { PermitGate } from './scheduler-updates';

export interface ScheduledRunDeps {
  client: Client;
  schedulerId: string;
  startRun: RunOfferPorts['startRun'];
  discardRun: RunOfferPorts['discardRun'];
  /** The tenant as the API stores it (undefined: no such tenant). */
  tenant: (tenant: string) => Promise<TenantRecord | undefined>;
  /** The fleet's permits for workers' scheduler updates (WORKER_UPDATE_PERMITS); without: unbounded. */
  updatePermits?: PermitGate;
  log: Logger;
}

/** How often a run's wait heartbeats (its heartbeat timeout is 30 s). */
const WAIT_HEARTBEAT_MS = 5000;

/**
 * The run id of one firing: `run-<tenant>-<20 hex>` from the firing's workflow id (the schedule's id
 * and its scheduled time), so a retried firing offers the same run and never a second one.
 */
export function scheduledRunId(tenant: string, firingWorkflowId: string): string {
  return `run-${tenant}-${createHash('sha256').update(firingWorkflowId).digest('hex').slice(0, 20)}`;
}

/** The activities of a schedule's firing: the run's offer (the door's path), its wait, its cancel. */
export function scheduledRunActivities(deps: ScheduledRunDeps): ScheduledRunActivities {
  const { client } = deps;
  const update = schedulerUpdates(client, deps.schedulerId, deps.updatePermits);
  const cancellable = <R>(fn: () => Promise<R>): Promise<R> =>
    client.withAbortSignal(Context.current().cancellationSignal, fn);

  return {
    async submitScheduledRun(job): Promise<ScheduledRunOutcome> {
      const firing = Context.current().info.workflowExecution?.workflowId;
      if (!firing) throw new Error("submitScheduledRun runs only as a firing workflow's activity");
      const runId = scheduledRunId(job.tenant, firing);
      const record = await deps.tenant(job.tenant);
      const refused = (code: 'not_found' | 'tenant_disabled', message: string): ScheduledRunOutcome => {
        deps.log.info({ scheduleId: job.scheduleId, code }, 'scheduled run refused');
        return { state: 'refused', runId, code, message, retryAfterSeconds: 0 };
      };
      if (!record) return refused('not_found', `Tenant ${job.tenant} no longer exists.`);
      if (record.disabled) return refused('tenant_disabled', `Tenant ${job.tenant} is disabled.`);
      const spec = {
        runId,
        tenant: job.tenant,
        agent: job.agent,
        priority: job.priority,
        input: job.input,
        estimatedTokens: job.estimatedTokens,
        onBudgetExhausted: record.settings.onBudgetExhausted ?? 'fail',
        ...(job.pool ? { pool: job.pool } : {}),
        ...(job.fairnessKey ? { fairnessKey: job.fairnessKey } : {}),
        createdAt: new Date().toISOString(),
      };
      const ports: RunOfferPorts = {
        startRun: deps.startRun,
        discardRun: deps.discardRun,
        submit: (units) => update(submitUpdate, [units], { signal: Context.current().cancellationSignal }),
      };
      const [outcome] = await offerRuns(ports, [spec], {
        resync: async (tenant) => {
          const settings = schedulerSettings(record);
          await update(upsertTenantsUpdate, [[{ tenant, settings }]], {
            signal: Context.current().cancellationSignal,
          });
        },
      });
      if (!outcome) throw new Error(`no offer outcome for ${runId}`);
      if (outcome.state === 'finished') return { state: 'finished', runId };
      if (outcome.state === 'accepted') return { state: 'accepted', runId, held: outcome.held };
      // Recorded as this firing's outcome, as POST /v1/runs would answer it; the next firing tries anew.
      const code = refusalCode(outcome.refusal);
      deps.log.info({ scheduleId: job.scheduleId, runId, code }, 'scheduled run refused');
      return {
        state: 'refused',
        runId,
        code,
        message: outcome.refusal.message || `Refused: ${code}.`,
        retryAfterSeconds: Math.max(1, Math.ceil(outcome.refusal.retryAfterSeconds)),
      };
    },

    async awaitScheduledRun(runId): Promise<RunStatus> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), WAIT_HEARTBEAT_MS);
      try {
        const view = (await cancellable(() => client.workflow.getHandle(runId).result())) as RunView;
        return view.status;
      } catch (err) {
        if (err instanceof WorkflowFailedError) return 'failed';
        throw err;
      } finally {
        clearInterval(beat);
      }
    },

    async cancelScheduledRun(runId) {
      await signalRun(client, runId, cancelRunSignal);
    },
  };
}

import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { Config } from '../config';
import { SCHEDULER_PRIORITY_KEY } from './priority-keys';
import type { schedulerWorkflow, SchedulerInput } from '../workflows/scheduler';
import type { SchedulerStateStore } from '../stores/scheduler-state/scheduler-state';

/** The scheduler workflow's input from config (used only when the chain does not exist yet). */
export function schedulerInput(config: Config, extra: Partial<SchedulerInput> = {}): SchedulerInput {
  const f = config.fleet;
  return {
    settings: { ...f, floors: { ...f.floors } },
    governor: {
      ...config.governor,
      maxConcurrency: Math.max(config.governor.maxConcurrency, f.concurrency),
    },
    maxHistoryEvents: config.schedulerMaxHistoryEvents,
    ...extra,
  };
}

/** Where a new chain reads the operator's drain and runtime settings from. */
export type OperatorStateSource = Pick<SchedulerStateStore, 'get'>;

/**
 * Starts the scheduler workflow under its fixed id unless it already runs (idempotent). With
 * `operator`, the store is read first and a new chain begins with its drain and settings (a store
 * that cannot be read fails the start: a chain must never begin open while the operator drained).
 */
export async function ensureScheduler(
  client: Client,
  config: Config,
  extra: Partial<SchedulerInput> = {},
  operator?: OperatorStateSource,
): Promise<void> {
  if (operator) {
    const { drain, settings } = await operator.get();
    extra = { ...extra, operator: { drain, settings } };
  }
  await client.workflow.start<typeof schedulerWorkflow>('schedulerWorkflow', {
    workflowId: config.schedulerWorkflowId,
    taskQueue: config.temporal.taskQueue,
    args: [schedulerInput(config, extra)],
    // Its tasks (and notices) go before every run's: admissions must not wait behind a backlog.
    priority: { priorityKey: SCHEDULER_PRIORITY_KEY },
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
}

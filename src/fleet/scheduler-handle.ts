import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy } from '@temporalio/common';
import type { Config } from '../config';
import type { schedulerWorkflow, SchedulerInput } from '../workflows/scheduler';

/** The scheduler workflow's input from config (used only when the chain does not exist yet). */
export function schedulerInput(config: Config, extra: Partial<SchedulerInput> = {}): SchedulerInput {
  const f = config.fleet;
  return {
    settings: {
      concurrency: f.concurrency,
      floors: f.floors,
      leaseTtlSeconds: f.leaseTtlSeconds,
      globalMaxQueued: f.globalMaxQueued,
    },
    governor: {
      ...config.governor,
      maxConcurrency: Math.max(config.governor.maxConcurrency, f.concurrency),
    },
    ...extra,
  };
}

/** Starts the scheduler workflow under its fixed id unless it already runs (idempotent). */
export async function ensureScheduler(
  client: Client,
  config: Config,
  extra: Partial<SchedulerInput> = {},
): Promise<void> {
  await client.workflow.start<typeof schedulerWorkflow>('schedulerWorkflow', {
    workflowId: config.schedulerWorkflowId,
    taskQueue: config.temporal.taskQueue,
    args: [schedulerInput(config, extra)],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
  });
}

import { WorkflowUpdateFailedError } from '@temporalio/client';
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

/**
 * Retries a scheduler message through transient faults (the chain continuing-as-new answers
 * "closing" for a moment). Safe because every scheduler message is idempotent.
 */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** i)));
    }
  }
}

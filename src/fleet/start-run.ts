import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { RunSpec } from '../contract/fleet-port';
import type { runWorkflow } from '../workflows/run';
import { BatchIdKey, PriorityKey, RunStatusKey, TenantIdKey } from '../contract/search-attributes';

/**
 * Starts a run's workflow with its business key as workflow id, so a repeated start is idempotent:
 * a running one is reused, a finished one is never run twice (unless `redrive`, for failed ones).
 */
export async function startRunWorkflow(
  client: Client,
  taskQueue: string,
  spec: RunSpec,
  opts: { redrive?: boolean } = {},
): Promise<void> {
  const pairs = [
    { key: TenantIdKey, value: spec.tenant },
    { key: PriorityKey, value: spec.priority },
    { key: RunStatusKey, value: 'queued' },
    ...(spec.batchId ? [{ key: BatchIdKey, value: spec.batchId }] : []),
  ];
  try {
    await client.workflow.start<typeof runWorkflow>('runWorkflow', {
      workflowId: spec.runId,
      taskQueue,
      args: [spec],
      typedSearchAttributes: new TypedSearchAttributes(pairs),
      memo: { agent: spec.agent, createdAt: spec.createdAt },
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: opts.redrive
        ? WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY
        : WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return; // finished earlier: never run twice
    throw err;
  }
}

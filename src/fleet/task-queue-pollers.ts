import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * True when Temporal lists a workflow poller of `taskQueue`: a worker that polled it lately (the
 * server keeps a poller listed for a few minutes after its last poll, so a worker that is paused or
 * restarting still counts; one never started does not).
 */
export async function hasWorkflowPollers(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<boolean> {
  const res = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (res.pollers ?? []).length > 0;
}

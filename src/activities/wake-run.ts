import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { SignalDefinition } from '@temporalio/common';

/**
 * Signals a run, ending its start delay if it has one; false when the run is missing or closed.
 *
 * A run whose unit must queue is started with a delay (decide, then start; `RUN_QUEUED_START`), so it
 * costs no workflow task while it waits. A plain signal does not end a start delay; a
 * signal-with-start does, and to a running workflow it is only a signal. So a run started with a
 * delay (its execution time after its start time) is signalled with signal-with-start, any other
 * plainly; the description that tells them apart also tells a missing or closed run, which is never
 * started by the signal (a closed one is refused by the reuse policy).
 */
export async function signalRun<A extends unknown[]>(
  client: Client,
  runId: string,
  signal: SignalDefinition<A>,
  ...args: A
): Promise<boolean> {
  const handle = client.workflow.getHandle(runId);
  try {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return false;
    const delayed = d.executionTime !== undefined && d.executionTime.getTime() > d.startTime.getTime();
    if (!delayed) {
      await handle.signal(signal, ...args);
      return true;
    }
    // The start half never applies (the run is running), so its arguments are none.
    const options = {
      workflowId: runId,
      taskQueue: d.taskQueue,
      args: [],
      signal: signal.name,
      signalArgs: args as unknown[],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    };
    await client.workflow.signalWithStart(d.type, options as never);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || err instanceof WorkflowExecutionAlreadyStartedError)
      return false;
    throw err;
  }
}

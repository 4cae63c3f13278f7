import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** Milliseconds since the epoch of a history event's time. */
function eventMs(e: temporal.api.history.v1.IHistoryEvent): number {
  const t = e.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : NaN;
}

/**
 * Where the time went between a run's submission and its first model call, each hop as ms after the
 * submission: the API's start of the run workflow (`started`), the run's first workflow task
 * (`firstTask`), the scheduler's admission (`admitted`, the scheduler's clock), the 202 reaching the
 * client (`accepted`), the admit signal in the run's history (`signalled`), the run's next workflow
 * task picking it up (`taskStarted`) and the call reaching the simulator (`firstCall`).
 */
export interface RunHops {
  started: number;
  firstTask: number;
  admitted: number;
  accepted: number;
  signalled: number;
  taskStarted: number;
  firstCall: number;
}

export async function runHops(
  client: Client,
  runId: string,
  at: { submitted: number; accepted: number; admitted: number; firstCall: number },
): Promise<RunHops> {
  const events = (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
  const rel = (ms: number) => ms - at.submitted;
  const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
  const firstTask = events.find((e) => e.workflowTaskCompletedEventAttributes);
  const signalIdx = events.findIndex(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'admit',
  );
  const taskAfter = events.slice(signalIdx + 1).find((e) => e.workflowTaskStartedEventAttributes);
  return {
    started: started ? rel(eventMs(started)) : NaN,
    firstTask: firstTask ? rel(eventMs(firstTask)) : NaN,
    admitted: rel(at.admitted),
    accepted: rel(at.accepted),
    signalled: signalIdx >= 0 ? rel(eventMs(events[signalIdx]!)) : NaN,
    taskStarted: taskAfter ? rel(eventMs(taskAfter)) : NaN,
    firstCall: rel(at.firstCall),
  };
}

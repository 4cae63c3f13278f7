import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';

/**
 * Update failures the server gives when no handler finished the update: `UnprocessedUpdate` (the
 * workflow task ended without the worker taking the update, as when a worker stops during a deploy)
 * and `AcceptedUpdateCompletedWorkflow` (the run closed, e.g. continued-as-new, before the handler
 * finished). Neither is the scheduler's answer to the message, so sending it again is right.
 */
const NOT_ANSWERED = new Set(['UnprocessedUpdate', 'AcceptedUpdateCompletedWorkflow']);

export function isUnansweredUpdate(err: unknown): boolean {
  return (
    err instanceof WorkflowUpdateFailedError &&
    err.cause instanceof ApplicationFailure &&
    NOT_ANSWERED.has(err.cause.type ?? '')
  );
}

/**
 * Retries a scheduler message through transient faults (the chain continuing-as-new answers
 * "closing" for a moment, a stopping worker leaves an update unprocessed). Safe because every
 * scheduler message is idempotent. A failure the scheduler itself gave (a validator's refusal) is final.
 */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if ((err instanceof WorkflowUpdateFailedError && !isUnansweredUpdate(err)) || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** i)));
    }
  }
}

/**
 * Retries a read-only query of the scheduler a few times. A query that meets a workflow task the
 * worker has not started yet is refused once (the scheduler starts no commands in that activation,
 * see src/workflows/scheduler-task-watch.ts) and answered on the next try; a scheduler that does not
 * exist is final.
 */
export async function withQueryRetry<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 100 * 2 ** i));
    }
  }
}

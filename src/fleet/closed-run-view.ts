import { WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { RunView } from '../contract/fleet-port';

/**
 * A closed run's view from its close event: a run that ended returns its view, a failed one carries it
 * in its failure's details. Needs no worker and replays nothing (a query on a closed run replays its
 * whole history on some worker). Null for a run closed another way (terminated, timed out).
 */
export async function closedRunView(handle: WorkflowHandle): Promise<RunView | null> {
  try {
    return (await handle.result()) as RunView;
  } catch (err) {
    const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
    const details: unknown = cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
    return details !== null && typeof details === 'object' ? (details as RunView) : null;
  }
}

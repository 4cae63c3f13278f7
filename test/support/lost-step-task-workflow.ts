import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { local, shortStepsFor } from '../../src/workflows/run-activities';

export interface LostStepTaskInput {
  runId: string;
  tenant: string;
  tokens: number;
}

/**
 * A test-only workflow: one short model step (a local activity, as a run's), then its workflow task
 * is lost once. The first task fails after the step has run (as one whose completion the server
 * failed to persist), so the step's result is never recorded and the retried task runs it again.
 */
export async function lostStepTaskProbe(input: LostStepTaskInput): Promise<{ usedTokens: number }> {
  const { runId, tenant } = input;
  const lease = { runId, tenant, attempt: 0, usedSoFar: 0, leaseTtlMs: 60_000 };
  const r = await shortStepsFor(undefined).modelStep({ ...lease, step: 1, tokens: input.tokens, minMs: 0 });
  // The first task's history: started, task scheduled, task started. A retried task's holds more.
  if (workflowInfo().historyLength <= 3) throw new Error('the workflow task that ran the step is lost');
  if (workflowInfo().historyLength > 12)
    throw ApplicationFailure.nonRetryable('the step ran in more than one retried task');
  await local.releaseLease({ runId, attempt: 0, usedTokens: r.usedTokens, outcome: 'completed', tenant });
  return r;
}

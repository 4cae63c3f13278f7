import { proxyActivities } from '@temporalio/workflow';
import type { FleetActivities } from '../../src/contract/activity-types';
import type { ModelCompletion, ModelRequest } from '../../src/contract/chat-model';

/** A test-only workflow: the model-call activities as a run would call them, one call at a time. */
const acts = proxyActivities<FleetActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumAttempts: 3 },
});

export interface ProbeInput {
  runId: string;
  tenant: string;
  requests: ModelRequest[];
}

/** Measures, reserves and calls each request in turn, then releases the run as a finished one does. */
export async function modelCallProbe(
  input: ProbeInput,
): Promise<{ completions: ModelCompletion[]; reserved: number[] }> {
  const completions: ModelCompletion[] = [];
  const reserved: number[] = [];
  let used = 0;
  for (const [i, request] of input.requests.entries()) {
    const m = await acts.measureModelCall(request);
    const r = await acts.modelCall({
      runId: input.runId,
      tenant: input.tenant,
      attempt: 0,
      step: i + 1,
      usedSoFar: used,
      leaseTtlMs: 60_000,
      request,
      reserved: m.worstCaseTokens,
    });
    used += r.completion.usage.totalTokens;
    completions.push(r.completion);
    reserved.push(r.reservedTokens);
  }
  await acts.releaseLease({
    runId: input.runId,
    attempt: 0,
    usedTokens: used,
    outcome: 'completed',
    perCall: true,
    tenant: input.tenant,
  });
  return { completions, reserved };
}

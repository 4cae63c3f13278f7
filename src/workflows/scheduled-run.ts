import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { RunStatus } from '../contract/fleet-port';
import type { ScheduledRunActivities, ScheduledRunJob, ScheduledRunOutcome } from '../contract/schedules';

const { submitScheduledRun, cancelScheduledRun } = proxyActivities<ScheduledRunActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

// A run may wait for a human for days: the wait heartbeats, so a lost worker's wait resumes elsewhere.
const { awaitScheduledRun } = proxyActivities<ScheduledRunActivities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/**
 * One firing of a schedule: offers its run through the scheduler like any submission (a refusal is
 * this firing's outcome, never retried), then, unless the schedule allows overlaps, waits for that run
 * to close so the schedule's overlap policy sees it as running. Cancelled (a newer firing under
 * `cancel_other`), it asks its run to cancel too.
 */
export async function scheduledRunWorkflow(
  job: ScheduledRunJob,
): Promise<ScheduledRunOutcome & { finalStatus?: RunStatus }> {
  const outcome = await submitScheduledRun(job);
  if (outcome.state !== 'accepted' || job.overlap === 'allow_all') return outcome;
  try {
    return { ...outcome, finalStatus: await awaitScheduledRun(outcome.runId) };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => cancelScheduledRun(outcome.runId));
    }
    throw err;
  }
}

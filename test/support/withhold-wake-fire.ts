import type { WorkflowInterceptors } from '@temporalio/workflow';

/**
 * Workflow interceptor module for replays: withholds the fire of the scheduler's wake-up timers
 * (seq 7 on: 1 to 6 are the recovery's follow-ups) from an activation that also carries updates,
 * as a worker that took the fired timer's event as already applied never delivered it.
 */
export const interceptors = (): WorkflowInterceptors => ({
  internals: [
    {
      activate(input, next) {
        const jobs = input.activation.jobs ?? [];
        if (!jobs.some((j) => j.doUpdate)) return next(input);
        const kept = jobs.filter((j) => !(j.fireTimer && (j.fireTimer.seq ?? 0) >= 7));
        return next({ ...input, activation: { ...input.activation, jobs: kept } });
      },
    },
  ],
});

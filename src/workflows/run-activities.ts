import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { FleetActivities } from '../contract/activity-types';

/** Failures that retrying cannot fix: the run fails with the reason. */
export const NON_RETRYABLE = ['AgentStepFailed', 'ModelSpendCap', 'ModelRequestRejected'];

/**
 * A model call's start-to-close timeout: the run's setting, or `unsetMs` for a run started without one.
 * The activity's HTTP client gives up a little before it (`clientTimeoutMs`).
 */
function modelCallTimeoutMs(seconds: number | undefined, unsetMs: number): number {
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : unsetMs;
}

export const local = proxyLocalActivities<FleetActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '5s' },
});
/**
 * Short steps run as local activities: no task-queue round trip and a few history events instead
 * of a dozen, which is what bounds a single dev server's throughput. Longer steps stay regular
 * activities: they heartbeat, survive a worker's death mid-step, and do not hold the workflow task
 * open (signals such as cancel are delivered only when it closes). A short step is one model call:
 * its timeout is the run's `modelCallTimeoutSeconds`.
 */
export function shortStepsFor(modelCallTimeoutSeconds: number | undefined) {
  return proxyLocalActivities<FleetActivities>({
    startToCloseTimeout: modelCallTimeoutMs(modelCallTimeoutSeconds, 60_000),
    retry: { initialInterval: '1s', maximumInterval: '2 minutes', nonRetryableErrorTypes: NON_RETRYABLE },
  });
}
/**
 * Longer steps (regular activities) under a lease of `leaseTtlMs`: the step heartbeats at a third of
 * the lease (10 s at most), and a worker gone is seen within half a lease (at least 10 s, at most
 * 30 s: the default lease of 60 s keeps 30 s), before the lease itself runs out.
 */
export function longStepsFor(leaseTtlMs: number) {
  return proxyActivities<FleetActivities>({
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: Math.min(30_000, Math.max(10_000, Math.round(leaseTtlMs / 2))),
    // maximumInterval bounds nextRetryDelay, so it must allow the provider's Retry-After.
    retry: { initialInterval: '1s', maximumInterval: '2 minutes', nonRetryableErrorTypes: NON_RETRYABLE },
  });
}
/** Steps of at most this many milliseconds run as local activities (`shortStepsFor`). */
export const SHORT_STEP_MS = 250;
/** Failures of an agent's model call that retrying cannot fix: the run fails with the reason. */
export const MODEL_CALL_NOT_RETRIED = [...NON_RETRYABLE, 'ModelUnknown', 'ModelReservationShort'];
/**
 * An agent's own model call (`ctx.model`) is a regular activity: a provider may think for minutes, and
 * the call heartbeats and renews the lease meanwhile. Measuring its reservation is a local one (the
 * tokenizer, no I/O). Temporal does not retry it: each attempt may be billed, so the run tries again
 * itself, under a reservation of its own (run-model-call.ts), as a first call would be reserved.
 */
export function modelCallsFor(leaseTtlMs: number, modelCallTimeoutSeconds: number | undefined) {
  // The call heartbeats at a third of the lease (10 s at most): a worker gone is seen within a lease.
  const heartbeatMs = Math.min(30_000, Math.max(5_000, Math.round(leaseTtlMs)));
  return proxyActivities<FleetActivities>({
    startToCloseTimeout: modelCallTimeoutMs(modelCallTimeoutSeconds, 15 * 60_000),
    heartbeatTimeout: heartbeatMs,
    retry: { maximumAttempts: 1 },
  });
}
/** The tokenizer's count of a call's worst case: a local activity, given the time a very long conversation takes. */
export const measure = proxyLocalActivities<FleetActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '200ms', maximumInterval: '5s', nonRetryableErrorTypes: ['ModelUnknown'] },
});
/**
 * A user's effect function (`ctx.effect(name)` of a declared effect) runs on a worker of the run's
 * task queue that holds it, attempted at most `maxAttempts` times (EFFECT_MAX_ATTEMPTS); the
 * activity delivers it once per key. It heartbeats while it runs: a worker gone is seen within 30 s,
 * not at the start-to-close timeout (`timeoutSeconds`, EFFECT_TIMEOUT_SECONDS).
 */
export function agentEffectsFor(maxAttempts: number, timeoutSeconds: number) {
  return proxyActivities<FleetActivities>({
    startToCloseTimeout: timeoutSeconds * 1000,
    heartbeatTimeout: '30 seconds',
    retry: {
      initialInterval: '1s',
      maximumInterval: '1 minute',
      maximumAttempts: maxAttempts,
      nonRetryableErrorTypes: ['UnknownEffect'],
    },
  });
}
/**
 * A waiting run's check on the scheduler is a regular activity, not a local one: it waits on the
 * scheduler (a query, maybe an update), and a local activity would hold the run's workflow task, and
 * a worker slot, meanwhile; with thousands of runs checking, the scheduler's own tasks would starve.
 */
export const checks = proxyActivities<FleetActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5s', maximumInterval: '1 minute' },
});

import type { SchedulerStatus } from './types';

/** The scheduler's lifetime counters, exactly as `status` reports them. */
export type Counters = SchedulerStatus['counters'];

/** Counters of a fresh scheduler (and the defaults of counters a restored snapshot lacks). */
export function zeroCounters(): Counters {
  return {
    submitted: 0,
    admitted: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    shed: 0,
    expired: 0,
    admittedByPriority: { interactive: 0, standard: 0, batch: 0 },
    modelCalls: 0,
    throttled: 0,
  };
}

import { log } from '@temporalio/workflow';
import type { Admission } from '../scheduler/types';
import { TaskWatch } from './scheduler-task-watch';

/**
 * What the scheduler's loop and its handlers share: whether something changed since the loop last
 * looked (`dirty`), and the activities still in flight (`pending`), which the chain waits for before
 * it continues-as-new; and which activations it has seen (`watch`), so it starts commands only in
 * one a workflow task applies.
 */
export class SchedulerWork {
  /** Something changed: the loop runs again (starts true: the first pass always runs). */
  dirty = true;
  pending = 0;
  readonly watch = new TaskWatch();
  /** Admissions a handler's round made for runs that are told by notice: the loop's next pass sends them. */
  admitted: Admission[] = [];

  touch(): void {
    this.watch.see();
    this.dirty = true;
  }

  /** Marks the state changed and passes `value` through (for handlers that answer). */
  touched<T>(value: T): T {
    this.touch();
    return value;
  }

  /** Counts an activity in flight until it settles; its failure is logged, never thrown. */
  track(p: Promise<void>): void {
    this.pending++;
    p.catch((err: unknown) => log.error('scheduler activity failed', { err: String(err) })).finally(() => {
      this.pending--;
      this.touch();
    });
  }
}

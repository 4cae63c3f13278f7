import { log } from '@temporalio/workflow';

/**
 * What the scheduler's loop and its handlers share: whether something changed since the loop last
 * looked (`dirty`), and the activities still in flight (`pending`), which the chain waits for before
 * it continues-as-new.
 */
export class SchedulerWork {
  /** Something changed: the loop runs again (starts true: the first pass always runs). */
  dirty = true;
  pending = 0;

  touch(): void {
    this.dirty = true;
  }

  /** Marks the state changed and passes `value` through (for handlers that answer). */
  touched<T>(value: T): T {
    this.dirty = true;
    return value;
  }

  /** Counts an activity in flight until it settles; its failure is logged, never thrown. */
  track(p: Promise<void>): void {
    this.pending++;
    p.catch((err: unknown) => log.error('scheduler activity failed', { err: String(err) })).finally(() => {
      this.pending--;
      this.dirty = true;
    });
  }
}

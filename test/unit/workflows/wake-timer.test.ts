import { describe, expect, it } from 'vitest';
import { timerToArm } from '../../../src/workflows/scheduler-support';

/**
 * The scheduler's wake-up timer: whether one is still pending is read from workflow time alone. A
 * worker can miss a fired timer's event that a replay applies (the fire callback runs on replay
 * only); the timers started must be the same both ways, or the replay fails (nondeterminism) and the
 * first execution, believing a past timer still pending, never wakes again.
 */
describe('timerToArm', () => {
  const now = 1_000_000;

  it('starts a timer for the wake-up when none is pending', () => {
    expect(timerToArm(null, now + 10_000, now)).toBe(now + 10_000);
  });

  it('needs none when nothing is pending in the core', () => {
    expect(timerToArm(null, null, now)).toBeNull();
    expect(timerToArm(now + 5_000, null, now)).toBeNull();
  });

  it('a pending timer due no later than the wake-up covers it', () => {
    expect(timerToArm(now + 5_000, now + 10_000, now)).toBeNull();
    expect(timerToArm(now + 10_000, now + 10_000, now)).toBeNull();
  });

  it('an earlier wake-up than the pending timer gets its own timer', () => {
    expect(timerToArm(now + 10_000, now + 5_000, now)).toBe(now + 5_000);
  });

  it('a timer whose time has come counts as fired, whether or not its fire was seen', () => {
    // The drill's scheduler: its timer was due 28.6 s before this task, and the worker never saw it fire.
    expect(timerToArm(now - 28_600, now + 10_000, now)).toBe(now + 10_000);
    expect(timerToArm(now, now + 10_000, now)).toBe(now + 10_000);
  });

  it('the same answer whether the fire callback cleared the pending time or not', () => {
    for (const due of [now - 1, now, now - 60_000])
      for (const wake of [now, now + 1, now + 10_000, null])
        expect(timerToArm(due, wake, now)).toBe(timerToArm(null, wake, now));
  });

  it('a wake-up due already waits 1 ms, and is covered by a timer started for it in the same task', () => {
    const due = timerToArm(null, now, now);
    expect(due).toBe(now + 1);
    expect(timerToArm(due, now, now)).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { beyondTaskStart } from '../../../src/workflows/scheduler-task-watch';

/**
 * The scheduler starts no commands in an activation that applies events no workflow task has
 * started (a query task's, while a task is scheduled but not started): the history grew while its
 * size, which only a task's start sets, stayed. Every workflow task's start changes the size, so a
 * task's own activations never count.
 */
describe('beyondTaskStart', () => {
  it('the history grew and its size did not: events applied before their task started', () => {
    expect(beyondTaskStart({ length: 519, size: 91_000 }, { length: 543, size: 91_000 })).toBe(true);
  });

  it("a workflow task's start (a new size) is a task's activation", () => {
    expect(beyondTaskStart({ length: 543, size: 91_000 }, { length: 544, size: 95_500 })).toBe(false);
    expect(beyondTaskStart({ length: 519, size: 91_000 }, { length: 544, size: 95_500 })).toBe(false);
  });

  it("a task's second activation (nothing new applied) is the task's", () => {
    expect(beyondTaskStart({ length: 544, size: 95_500 }, { length: 544, size: 95_500 })).toBe(false);
  });

  it('the first activation, and a server that reports no size, never count', () => {
    expect(beyondTaskStart(null, { length: 3, size: 800 })).toBe(false);
    expect(beyondTaskStart({ length: 3, size: 0 }, { length: 9, size: 0 })).toBe(false);
  });
});

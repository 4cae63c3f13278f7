import { workflowInfo } from '@temporalio/workflow';

/** How much history an activation has applied: its events, and its size as of the last workflow task start. */
export interface HistoryMark {
  length: number;
  size: number;
}

/**
 * Whether `cur` applies events no workflow task has started yet: the history grew since `prev` (the
 * activation before) while its size, which only a workflow task's start sets, stayed. A query task
 * that meets a workflow task scheduled but not started does this: the worker applies the task's
 * events for the query, and the task's updates come in an activation of their own after them. A
 * replay never does: it applies those events with the task's updates, in one activation, updates
 * first. Never for a server that reports no size (0).
 */
export function beyondTaskStart(prev: HistoryMark | null, cur: HistoryMark): boolean {
  return prev !== null && cur.size > 0 && cur.size === prev.size && cur.length > prev.length;
}

/**
 * Follows the scheduler's activations (`see`, from its handlers, its callbacks and its wait) and
 * refuses to start commands in one that applies events no workflow task has started: `assertInTask`
 * throws, which fails the activation (a query task's: its query fails), so the worker drops the run
 * and applies those events again with their workflow task, in the order a replay applies them.
 * Commands started there would be sent ahead of that task's update acceptances, an order no replay
 * produces (its updates come first): "Update machine does not handle this event:
 * ActivityTaskScheduled" and the like.
 */
export class TaskWatch {
  private prev: HistoryMark | null = null;
  private cur: HistoryMark | null = null;

  see(): void {
    const { historyLength: length, historySize: size } = workflowInfo();
    if (this.cur?.length === length && this.cur.size === size) return;
    this.prev = this.cur;
    this.cur = { length, size };
  }

  assertInTask(): void {
    this.see();
    if (this.cur && beyondTaskStart(this.prev, this.cur))
      throw new Error(
        `scheduler activation applies history past the last workflow task start (${this.prev?.length} → ${this.cur.length} events, size ${this.cur.size}); starting no commands in it`,
      );
  }
}

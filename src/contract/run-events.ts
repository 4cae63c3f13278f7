import type { Priority } from '../scheduler/types';
import type { RunStatus } from './fleet-port';

/** How Temporal says a run execution ended (or that it is still running). */
export type ExecutionEnd =
  'running' | 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'other';

/** One run execution as visibility lists it (search attributes and memo). */
export interface RunExecution {
  runId: string;
  /** Temporal's run id of this execution: a re-driven run's new execution has its own. */
  executionId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  batchId: string | null;
  /** The RunStatus search attribute the run last set. */
  status: RunStatus;
  end: ExecutionEnd;
  /** When it closed (ms); null while it runs. */
  closedAt: number | null;
  /** The sequence of the gate it last opened (its memo's `gateSeq`); absent: it wrote none. */
  gateSeq?: number;
}

/**
 * What the webhooks' scan reads from Temporal visibility, without the run workflow's help: the fleet's
 * run executions of some tenants that closed at or after a time, and those waiting at a human gate.
 * Each visits its pages in order (`visit` per page); `awaitingApproval` reads a bounded number of
 * pages per call, the next call going on where it stopped (starting over after the last page).
 */
export interface RunEventSource {
  /** The executions closed at or after `fromMs` and before `toMs`. */
  closedBetween(
    tenants: string[],
    fromMs: number,
    toMs: number,
    visit: (page: RunExecution[]) => Promise<void>,
  ): Promise<void>;
  awaitingApproval(tenants: string[], visit: (page: RunExecution[]) => Promise<void>): Promise<void>;
}

import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { RunSpec } from '../contract/fleet-port';
import type { RunStart } from '../contract/admit-notice';
import type { RunOptions, runWorkflow } from '../workflows/run';
import {
  AgentNameKey,
  BatchIdKey,
  PriorityKey,
  RunStatusKey,
  TenantIdKey,
} from '../contract/search-attributes';
import { runTaskQueue } from './run-queues';
import { PRIORITY_KEY } from './priority-keys';

import type { StartOutcome } from '../contract/offer-runs';

/**
 * Starts a run's workflow with its business key as workflow id, so a repeated start is idempotent:
 * a running one is reused, a finished one is never run twice (unless `redrive`, for failed ones).
 *
 * Start comes before the scheduler hears of the run (batches, re-drives, and single runs unless they
 * decide first: then the run starts with the admission the scheduler answered, `opts.start`), so
 * an admission always finds its workflow; if nobody admits it, the run re-offers itself after
 * `reofferFirstSeconds` (its submitter may have died between start and submit, or the scheduler was
 * lost). The workflow starts with its lane's task-queue priority, so its first workflow task, its
 * admission's and its activities are served before lower lanes' backlog.
 *
 * A run whose unit waits in the scheduler's queue (`queued`, decide-first) starts with a start delay
 * when `delayQueuedMs` is given: no workflow task runs until its admission's notice, a
 * signal-with-start, ends the delay (a plain signal does not: measured on server 1.32), or until the
 * delay is over, when it checks on the scheduler at once (the safety net of a run whose notice never
 * came). Otherwise a queued run costs its first workflow task (4 events) and a timer while it waits.
 *
 * The run lives on its agent's task queue (runTaskQueue: a user agent's own queue, which only workers
 * that loaded it poll; a built-in's, the base queue). `opts.taskQueue` puts it on another queue (tests of a worker's refusals).
 */
export async function startRunWorkflow(
  client: Client,
  baseTaskQueue: string,
  spec: RunSpec,
  run: RunOptions,
  opts: {
    redrive?: boolean;
    taskQueue?: string;
    start?: RunStart;
    queued?: boolean;
    delayQueuedMs?: number;
  } = {},
): Promise<StartOutcome> {
  const delayed = opts.queued === true && opts.delayQueuedMs !== undefined;
  const start: RunStart | undefined = delayed ? { checkNow: true } : opts.start;
  const pairs = [
    { key: TenantIdKey, value: spec.tenant },
    { key: PriorityKey, value: spec.priority },
    { key: RunStatusKey, value: 'queued' },
    { key: AgentNameKey, value: spec.agent },
    ...(spec.batchId ? [{ key: BatchIdKey, value: spec.batchId }] : []),
  ];
  try {
    await client.workflow.start<typeof runWorkflow>('runWorkflow', {
      workflowId: spec.runId,
      taskQueue: opts.taskQueue ?? runTaskQueue(baseTaskQueue, spec.agent),
      args: start ? [spec, run, start] : [spec, run],
      ...(delayed ? { startDelay: Math.max(1, Math.round(opts.delayQueuedMs!)) } : {}),
      typedSearchAttributes: new TypedSearchAttributes(pairs),
      memo: {
        agent: spec.agent,
        createdAt: spec.createdAt,
        estimatedTokens: spec.estimatedTokens,
        ...(spec.fairnessKey ? { fairnessKey: spec.fairnessKey } : {}),
      },
      priority: { priorityKey: PRIORITY_KEY[spec.priority] },
      // FAIL, not USE_EXISTING: the offer must know whether this call created the run (only such a
      // run may be discarded on refusal) or an earlier offer did (its update may still admit it).
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      workflowIdReusePolicy: opts.redrive
        ? WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY
        : WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
    return 'started';
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // Running: an earlier offer started it. Closed: it ran before and is never run twice.
    const d = await client.workflow.getHandle(spec.runId).describe();
    return d.status.name === 'RUNNING' ? 'existing' : 'finished';
  }
}

/**
 * The start delay of a queued run: RUN_REOFFER_FIRST_SECONDS spread over [1, 2)× by its id, so runs
 * queued together do not all check on the scheduler together when their notices never came.
 */
export function queuedStartDelayMs(runId: string, run: Pick<RunOptions, 'reofferFirstSeconds'>): number {
  let hash = 0;
  for (let i = 0; i < runId.length; i++) hash = (hash * 31 + runId.charCodeAt(i)) >>> 0;
  return run.reofferFirstSeconds * 1000 * (1 + (hash % 1000) / 1000);
}

/**
 * Removes a run its offer created and the scheduler refused (it never held a slot), so a refused
 * request leaves no run behind. Deleting a running workflow terminates it first.
 */
export async function discardRunWorkflow(client: Client, namespace: string, runId: string): Promise<void> {
  await client.workflowService
    .deleteWorkflowExecution({ namespace, workflowExecution: { workflowId: runId } })
    .catch(() => undefined); // already gone
}

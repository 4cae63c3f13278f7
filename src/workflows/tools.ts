import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { toolTaskQueue } from '../contract/tool-registry';
import type { ToolCallView, ToolName, ToolRequest, ToolResponse } from '../contract/tool-registry';

/** One tool call of a run: the agent, the tools it declared, the call's key and arguments. */
export interface ToolCall {
  agent: string;
  /** The tools the agent declared (its definition's `tools`); any other is refused. */
  declared: readonly string[];
  runId: string;
  tool: string;
  key: string;
  args: Record<string, unknown>;
  /** The fleet's base task queue (tool queues hang off it, whichever agent queue the run is on). */
  baseTaskQueue: string;
}

/**
 * The fleet's base task queue of a run on `taskQueue`: an agent's runs are served on
 * `<base>.agent.<name>` (agentTaskQueue), older runs and tests on the base queue itself.
 */
export function baseTaskQueueOf(taskQueue: string, agent: string): string {
  const suffix = `.agent.${agent}`;
  return taskQueue.endsWith(suffix) ? taskQueue.slice(0, -suffix.length) : taskQueue;
}

/**
 * One tool call from a run: refused (and recorded) unless the run's agent declared the tool, else sent
 * to the tool's own task queue, where only a worker holding that tool's credential listens. The call
 * and its answer carry no credential, only the identity's name and key id.
 */
export async function callTool(
  call: ToolCall,
  record: (entry: ToolCallView) => void,
): Promise<Record<string, unknown>> {
  const at = new Date().toISOString();
  if (!call.declared.includes(call.tool)) {
    const reason = `agent "${call.agent}" did not declare tool "${call.tool}"`;
    record({ tool: call.tool, identity: null, outcome: 'refused', at, reason });
    throw ApplicationFailure.create({ type: 'ToolNotDeclared', message: reason, nonRetryable: true });
  }
  // Tool names are strings: the tool's worker, not this registry, knows whether it serves one.
  const tool = call.tool as ToolName;
  const acts = proxyActivities<Record<string, (req: ToolRequest) => Promise<ToolResponse>>>({
    taskQueue: toolTaskQueue(call.baseTaskQueue, tool),
    startToCloseTimeout: '1 minute',
    // No worker serving the tool (or a sink refusing it) fails the call after this, not never.
    scheduleToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['ToolNotDeclared'] },
  });
  try {
    const r = await acts[tool]!({
      tool,
      agent: call.agent,
      runId: call.runId,
      key: call.key,
      args: call.args,
    });
    record({ tool, identity: r.identity, outcome: 'ok', at });
    return r.data;
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const refused = cause instanceof ApplicationFailure && cause.type === 'ToolNotDeclared';
    record({
      tool,
      identity: null,
      outcome: refused ? 'refused' : 'failed',
      at,
      reason: cause instanceof Error ? cause.message : String(cause),
    });
    throw err;
  }
}

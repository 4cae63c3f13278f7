import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { isToolName, mayCall, toolTaskQueue } from '../contract/tool-registry';
import type { ToolActivities, ToolCallView } from '../contract/tool-registry';

/**
 * One tool call from a run: refused (and recorded) unless the run's agent declared the tool, else sent
 * to the tool's own task queue, where only a worker holding that tool's credential listens. The call
 * and its answer carry no credential, only the identity's name and key id.
 */
export async function callTool(
  call: { agent: string; runId: string; tool: string; key: string; args: Record<string, unknown> },
  record: (entry: ToolCallView) => void,
): Promise<Record<string, unknown>> {
  const at = new Date().toISOString();
  if (!isToolName(call.tool) || !mayCall(call.agent, call.tool)) {
    const reason = `agent "${call.agent}" did not declare tool "${call.tool}"`;
    record({ tool: call.tool, identity: null, outcome: 'refused', at, reason });
    throw ApplicationFailure.create({ type: 'ToolNotDeclared', message: reason, nonRetryable: true });
  }
  const tool = call.tool;
  const acts = proxyActivities<ToolActivities>({
    taskQueue: toolTaskQueue(workflowInfo().taskQueue, tool),
    startToCloseTimeout: '1 minute',
    // No worker serving the tool (or a sink refusing it) fails the call after this, not never.
    scheduleToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: ['ToolNotDeclared'] },
  });
  try {
    const r = await acts[tool]({
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

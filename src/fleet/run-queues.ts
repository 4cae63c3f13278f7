import { agentTaskQueue } from '../agent/define';
import { BUILT_IN_AGENT_NAMES } from './built-in-agents';

/**
 * The visibility clause of a fleet's run workflows: a user agent's runs live on its agent's task queue
 * (`<base>.agent.<name>`, see agentTaskQueue), the built-ins' on the base queue (runTaskQueue).
 */
export function fleetRunsClause(baseTaskQueue: string): string {
  const q = baseTaskQueue.replace(/'/g, "\\'");
  return `WorkflowType = 'runWorkflow' AND (TaskQueue = '${q}' OR TaskQueue STARTS_WITH '${q}.agent.')`;
}

/**
 * The task queue a run of `agent` lives on: a user's agent on its own queue (agentTaskQueue), served
 * by the workers that loaded it; a built-in on the base queue, which every fleet worker serves (one
 * Temporal worker instead of one per built-in).
 */
export function runTaskQueue(baseTaskQueue: string, agent: string): string {
  return BUILT_IN_AGENT_NAMES.includes(agent) ? baseTaskQueue : agentTaskQueue(baseTaskQueue, agent);
}

/**
 * The visibility clause of a fleet's run workflows: every run lives on its agent's task queue
 * (`<base>.agent.<name>`, see agentTaskQueue); runs started before agent queues live on the base queue.
 */
export function fleetRunsClause(baseTaskQueue: string): string {
  const q = baseTaskQueue.replace(/'/g, "\\'");
  return `WorkflowType = 'runWorkflow' AND (TaskQueue = '${q}' OR TaskQueue STARTS_WITH '${q}.agent.')`;
}

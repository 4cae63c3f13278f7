/**
 * The tool registry: the built-in tools, the scopes they act with, and which built-in agent may call
 * which; a user's tools are named by strings (an agent's `tools`, startToolWorker's `name`). Pure
 * (workflow code imports it). A tool's credential is not here: only the worker that serves the tool's
 * task queue holds it (src/fleet/tool-worker.ts), and nothing that workflow code sees (inputs,
 * results, memos, history) ever carries it.
 */
export const TOOL_NAMES = ['lookup', 'pager', 'scanner'] as const;
/** A built-in tool. */
export type BuiltInToolName = (typeof TOOL_NAMES)[number];
/** Any tool: a built-in or one a user's worker serves (`TOOL_NAME_PATTERN`). */
export type ToolName = string;

/** What a tool's name looks like (it names a task queue and an activity). */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;

export interface ToolDefinition {
  name: BuiltInToolName;
  description: string;
  /** What the tool's identity may do; the effect sink accepts acts only from identities with `pages:write`. */
  scopes: readonly string[];
}

export const TOOLS: Record<BuiltInToolName, ToolDefinition> = {
  lookup: { name: 'lookup', description: 'Reads an incident record.', scopes: ['incidents:read'] },
  pager: { name: 'pager', description: 'Pages the on-call engineer (an effect).', scopes: ['pages:write'] },
  scanner: {
    name: 'scanner',
    description: 'Scans audit targets (one call reads up to 50).',
    scopes: ['targets:scan'],
  },
};

/** The tools each built-in agent declares; a call to any other tool is refused and recorded. */
export const AGENT_TOOLS: Record<string, readonly BuiltInToolName[]> = {
  synthetic: ['lookup'],
  triage: ['lookup', 'pager'],
  audit: ['scanner'],
};

/** True for a built-in tool's name. */
export function isToolName(name: string): name is BuiltInToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** True when the built-in `agent` declared the built-in `tool`. */
export function mayCall(agent: string, tool: string): boolean {
  return Object.hasOwn(AGENT_TOOLS, agent) && (AGENT_TOOLS[agent] ?? []).some((t) => t === tool);
}

/** A run's agent queue (`<base>.agent.<name>`, see agentTaskQueue), whose base its tools are served under. */
const AGENT_QUEUE_SUFFIX = /\.agent\.[a-z][a-z0-9-]{0,62}$/;

/**
 * The task queue a tool is served on: only workers holding that tool's credential poll it. `taskQueue`
 * is the fleet's base queue, or a run's agent queue (its base is used), so a run's workflow passes
 * its own queue.
 */
export function toolTaskQueue(taskQueue: string, tool: ToolName): string {
  return `${taskQueue.replace(AGENT_QUEUE_SUFFIX, '')}.tool.${tool}`;
}

/** One call of a tool, as the workflow sends it (no credential: the serving worker adds its own). */
export interface ToolRequest {
  tool: ToolName;
  /** The calling run's agent: the tool checks the declaration again on its side. */
  agent: string;
  runId: string;
  /** Idempotency key of the call (derived from the run id, hence from an event's id). */
  key: string;
  args: Record<string, unknown>;
}

/** What a tool answers: the identity it acted as (a name and key id, never the credential) and its data. */
export interface ToolResponse {
  identity: string;
  data: Record<string, unknown>;
}

/** One entry of a run's tool calls (`GET /v1/runs/:id` → `toolCalls`). */
export interface ToolCallView {
  tool: string;
  identity: string | null;
  outcome: 'ok' | 'refused' | 'failed';
  at: string;
  /** Why it was refused or failed. */
  reason?: string;
}

/** One tool's activity (named as the tool), on the tool's own task queue. */
export type ToolActivity = (req: ToolRequest) => Promise<ToolResponse>;
/** Activity signatures of the tool workers: one activity per tool, each on its own task queue. */
export type ToolActivities = Record<BuiltInToolName, ToolActivity> & Record<ToolName, ToolActivity>;

/**
 * The tool registry: every tool an agent may call, the scopes it acts with, and which agent may call
 * which. Pure (workflow code imports it). A tool's credential is not here: only the worker that serves
 * the tool's task queue reads it from config (src/fleet/tool-worker.ts), and nothing that workflow code
 * sees (inputs, results, memos, history) ever carries it.
 */
export const TOOL_NAMES = ['lookup', 'pager', 'scanner'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolDefinition {
  name: ToolName;
  description: string;
  /** What the tool's identity may do; the effect sink accepts acts only from identities with `pages:write`. */
  scopes: readonly string[];
}

export const TOOLS: Record<ToolName, ToolDefinition> = {
  lookup: { name: 'lookup', description: 'Reads an incident record.', scopes: ['incidents:read'] },
  pager: { name: 'pager', description: 'Pages the on-call engineer (an effect).', scopes: ['pages:write'] },
  scanner: {
    name: 'scanner',
    description: 'Scans audit targets (one call reads up to 50).',
    scopes: ['targets:scan'],
  },
};

/** The tools each built-in agent declares; a call to any other tool is refused and recorded. */
export const AGENT_TOOLS: Record<string, readonly ToolName[]> = {
  synthetic: ['lookup'],
  triage: ['lookup', 'pager'],
  audit: ['scanner'],
};

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** True when `agent` declared `tool`. */
export function mayCall(agent: string, tool: string): boolean {
  return Object.hasOwn(AGENT_TOOLS, agent) && (AGENT_TOOLS[agent] ?? []).some((t) => t === tool);
}

/** The task queue a tool is served on: only workers holding that tool's credential poll it. */
export function toolTaskQueue(baseTaskQueue: string, tool: ToolName): string {
  return `${baseTaskQueue}.tool.${tool}`;
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

/** Activity signatures of the tool workers: one activity per tool, each on its own task queue. */
export type ToolActivities = Record<ToolName, (req: ToolRequest) => Promise<ToolResponse>>;

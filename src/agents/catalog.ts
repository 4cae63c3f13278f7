import { z } from 'zod';

/**
 * The built-in agents: their input schemas (zod is the type) and their token estimates.
 * Pure module: the API validates with it, run workflows and workers may import it too.
 */
export interface AgentDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  /** True when the run stops at a human gate (`awaiting_approval`) before it acts. */
  humanGate: boolean;
  /** Estimated model tokens for a parsed input; the default `estimatedTokens` of a run. */
  estimate(input: z.output<S>): number;
}

export const SyntheticInputSchema = z.strictObject({
  steps: z.int().min(1).max(1000),
  tokensPerStep: z.int().min(1).max(100_000).default(100),
  stepMs: z.int().min(0).max(600_000).default(0),
  effect: z.boolean().default(false),
  failAtStep: z.int().min(1).optional(),
  /** Tools to call once each, in order, after the steps (one not declared is refused and fails the run). */
  tools: z.array(z.string().min(1).max(64)).max(10).optional(),
});
export type SyntheticInput = z.output<typeof SyntheticInputSchema>;

export const TriageInputSchema = z.strictObject({
  incident: z.string().min(1).max(2000),
  severity: z.enum(['low', 'high']).optional(),
});
export type TriageInput = z.output<typeof TriageInputSchema>;

export const AuditInputSchema = z.strictObject({
  targets: z.array(z.string().min(1).max(500)).min(1).max(50),
});
export type AuditInput = z.output<typeof AuditInputSchema>;

/**
 * The most a synthetic step's prompt can be billed (the longest run id, the largest step number):
 * a step is billed at least this plus one token, however few `tokensPerStep` it asks for. Counted in
 * the estimate so the run's reservation covers every step without asking for top-ups
 * (test/unit/agents/catalog.test.ts checks it against the model call's worst case).
 */
export const STEP_PROMPT_ALLOWANCE = 31;

const synthetic: AgentDefinition<typeof SyntheticInputSchema> = {
  name: 'synthetic',
  description:
    'Load and acceptance agent: `steps` model calls of `tokensPerStep` tokens, each lasting at least `stepMs`; ' +
    'optionally one idempotent effect; `failAtStep` fails that step for good; `tools` calls those tools ' +
    '(it declares only `lookup`: any other is refused).',
  input: SyntheticInputSchema,
  humanGate: false,
  estimate: (input) => input.steps * Math.max(input.tokensPerStep, STEP_PROMPT_ALLOWANCE),
};

const triage: AgentDefinition<typeof TriageInputSchema> = {
  name: 'triage',
  description:
    'Incident triage: reads the incident (`lookup` tool), proposes an action, waits for a human to approve ' +
    'it, then pages (`pager` tool).',
  input: TriageInputSchema,
  humanGate: true,
  estimate: () => 1500,
};

const audit: AgentDefinition<typeof AuditInputSchema> = {
  name: 'audit',
  description: 'Fan-out audit: checks every target (`scanner` tool) and reports the findings together.',
  input: AuditInputSchema,
  humanGate: false,
  estimate: (input) => 500 * input.targets.length,
};

export const AGENTS = { synthetic, triage, audit } as const;
export type AgentName = keyof typeof AGENTS;
export const AGENT_NAMES = Object.keys(AGENTS) as AgentName[];

/** The agent called `name`, or undefined (never an inherited property such as `constructor`). */
export function getAgent(name: string): AgentDefinition | undefined {
  return Object.hasOwn(AGENTS, name) ? AGENTS[name as AgentName] : undefined;
}

/** Parses `input` with the agent's schema (defaults applied) and returns its estimate; throws when either is unknown or invalid. */
export function estimateTokens(name: string, input: unknown): number {
  const agent = getAgent(name);
  if (!agent) throw new Error(`Unknown agent "${name}"`);
  return agent.estimate(agent.input.parse(input));
}

import type { z } from 'zod';
import type { Agent } from '../agent';
import { audit } from './audit';
import type { AuditInputSchema, AuditResult } from './audit';
import { synthetic } from './synthetic';
import type { SyntheticInputSchema, SyntheticResult } from './synthetic';
import { triage } from './triage';
import type { TriageInputSchema, TriageResult } from './triage';

export { AuditInputSchema } from './audit';
export type { AuditInput, AuditResult } from './audit';
export { STEP_PROMPT_ALLOWANCE, SyntheticInputSchema } from './synthetic';
export type { SyntheticInput, SyntheticResult } from './synthetic';
export { TriageInputSchema } from './triage';
export type { TriageInput, TriageProposal, TriageResult } from './triage';

/**
 * The built-in agents, written with defineAgent as a user writes theirs. Pure module: the API
 * validates with it, the workflow bundle registers it (src/workflows/agent-registry.ts).
 */

/** A built-in agent: its estimate is a function of the parsed input (callable as `agent.estimate(input)`). */
export type AgentDefinition<S extends z.ZodType = z.ZodType, R = unknown> = Agent<S, R> & {
  estimate(input: z.output<S>): number;
};

export const AGENTS = {
  synthetic: synthetic as AgentDefinition<typeof SyntheticInputSchema, SyntheticResult>,
  triage: triage as AgentDefinition<typeof TriageInputSchema, TriageResult>,
  audit: audit as AgentDefinition<typeof AuditInputSchema, AuditResult>,
} as const;
export type AgentName = keyof typeof AGENTS;
export const AGENT_NAMES = Object.keys(AGENTS) as AgentName[];

/** The built-ins as an agents module: what `agentsOf` and `registerAgents` take. */
export const BUILT_IN_AGENTS: Readonly<Record<AgentName, Agent>> = AGENTS;

/** The agent called `name`, or undefined (never an inherited property such as `constructor`). */
export function getAgent(name: string): AgentDefinition | undefined {
  return Object.hasOwn(AGENTS, name) ? (AGENTS[name as AgentName] as AgentDefinition) : undefined;
}

/** Parses `input` with the agent's schema (defaults applied) and returns its estimate; throws when either is unknown or invalid. */
export function estimateTokens(name: string, input: unknown): number {
  const agent = getAgent(name);
  if (!agent) throw new Error(`Unknown agent "${name}"`);
  return agent.estimate(agent.input.parse(input));
}

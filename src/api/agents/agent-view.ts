import { z } from 'zod';
import type { Agent } from '../../agent/define';
import type { AgentResponse } from '../openapi/schemas';

/** What GET /v1/agents shows of one agent, as the OpenAPI document describes it. */
export type AgentView = z.output<typeof AgentResponse>;

export const agentLink = (name: string) => `/v1/agents/${encodeURIComponent(name)}`;

const schemas = new WeakMap<Agent, Record<string, unknown>>();

/** The agent's input as JSON Schema; a part zod cannot express (a transform, a refinement) is left open. */
export function inputJsonSchema(agent: Agent): Record<string, unknown> {
  let schema = schemas.get(agent);
  if (!schema) {
    schema = z.toJSONSchema(agent.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    schemas.set(agent, schema);
  }
  return schema;
}

/** What GET /v1/agents shows of one agent. */
export function agentView(agent: Agent, served: boolean | null): AgentView {
  return {
    name: agent.name,
    description: agent.description ?? null,
    input: inputJsonSchema(agent),
    tools: [...(agent.tools ?? [])],
    effects: [...(agent.effects ?? [])],
    gate: agent.gate ? { timeoutSeconds: agent.gate.timeoutSeconds, onTimeout: agent.gate.onTimeout } : null,
    estimate:
      typeof agent.estimate === 'number' ? { kind: 'fixed', tokens: agent.estimate } : { kind: 'input' },
    served,
    links: { self: agentLink(agent.name) },
  };
}

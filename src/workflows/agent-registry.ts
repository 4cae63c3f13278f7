import { agentsOf } from '../agent/define';
import type { Agent } from '../agent/define';
import { BUILT_IN_AGENTS } from '../agents/catalog';

/**
 * The agents this workflow bundle runs: the built-ins, and the modules the worker bundled with them
 * (its generated entry calls registerAgents for each). Module state is per bundle, set at load.
 */
const registry = new Map<string, Agent>();

/** Registers every agent each module exports; throws on a name registered twice by different definitions. */
export function registerAgents(...modules: Record<string, unknown>[]): void {
  for (const mod of modules) {
    for (const [name, agent] of agentsOf(mod)) {
      const seen = registry.get(name);
      if (seen && seen !== agent) throw new TypeError(`Two agents are called "${name}".`);
      registry.set(name, agent);
    }
  }
}

/** The registered agent called `name` (never an inherited property). */
export function agentNamed(name: string): Agent | undefined {
  return registry.get(name);
}

/** Every registered agent. */
export function registeredAgents(): Agent[] {
  return [...registry.values()];
}

registerAgents(BUILT_IN_AGENTS);

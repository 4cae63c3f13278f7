import type { Agent } from '../../agent/define';
import { BUILT_IN_AGENTS } from '../../agents/catalog';

/** The built-in agents, held by the API's catalog as every agent is (it never runs them). */
export function builtInAgents(): Agent[] {
  return Object.values(BUILT_IN_AGENTS);
}

import type { Agent } from '../../agent/define';
import { AGENTS } from '../../agents/catalog';
import { GATES } from '../../agents/gates';
import { AGENT_TOOLS } from '../../contract/tool-registry';

const runsOnWorkers = (): Promise<never> =>
  Promise.reject(new Error('A built-in agent runs on the workers, never in the API.'));

/**
 * The built-in agents as the API's catalog holds every agent: their name, description, input schema,
 * estimate, tools and gate. The API never runs an agent, so `run` is a stand-in that refuses.
 */
export function builtInAgents(): Agent[] {
  return Object.values(AGENTS).map((a): Agent => ({
    kind: 'fairway.agent',
    name: a.name,
    description: a.description,
    input: a.input,
    estimate: (input: unknown) => a.estimate(input as never),
    tools: AGENT_TOOLS[a.name] ?? [],
    ...(GATES[a.name] ? { gate: GATES[a.name] } : {}),
    run: runsOnWorkers,
  }));
}

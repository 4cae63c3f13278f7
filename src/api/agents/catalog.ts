import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentsOf, estimateOf, type Agent } from '../../agent/define';
import { builtInAgents } from './built-ins';

/**
 * The agents the API knows: the built-ins and those of every agents module (AGENTS). The API validates
 * a run's input with its agent's schema and reserves its estimate; a name not here is `unknown_agent`.
 */
export class AgentCatalog {
  private readonly byName: ReadonlyMap<string, Agent>;

  /** Throws when two agents share a name. `origins` names where each came from, for that message. */
  constructor(agents: Iterable<{ agent: Agent; origin: string }>) {
    const byName = new Map<string, Agent>();
    const origin = new Map<string, string>();
    for (const { agent, origin: from } of agents) {
      const seen = origin.get(agent.name);
      if (seen !== undefined) {
        throw new Error(`Two agents are called "${agent.name}": one in ${seen}, one in ${from}. Rename one.`);
      }
      byName.set(agent.name, agent);
      origin.set(agent.name, from);
    }
    this.byName = byName;
  }

  /** The agent called `name`, or undefined. */
  get(name: string): Agent | undefined {
    return this.byName.get(name);
  }

  /** Every agent's name, in catalog order (the built-ins first). */
  names(): string[] {
    return [...this.byName.keys()];
  }

  list(): Agent[] {
    return [...this.byName.values()];
  }

  /** Tokens a run of `agent` with this parsed input is expected to use. */
  estimate(agent: Agent, input: unknown): number {
    return estimateOf(agent, input);
  }
}

/**
 * A module's exports, and those of its default export when that is a plain object (a CommonJS module
 * imported from ESM puts its exports there).
 */
function withDefaultExports(mod: Record<string, unknown>): Record<string, unknown> {
  const fallback = mod.default;
  if (typeof fallback !== 'object' || fallback === null) return mod;
  return { ...(fallback as Record<string, unknown>), ...mod };
}

/** The built-in agents only. */
export function builtInCatalog(): AgentCatalog {
  return new AgentCatalog(builtInAgents().map((agent) => ({ agent, origin: 'the built-in agents' })));
}

/**
 * The built-ins and the agents of each module in `modules` (paths relative to `cwd`), imported once at
 * start. Throws a message naming the module when one fails to import, exports no agent, or an agent's
 * name is already taken.
 */
export async function loadAgentCatalog(
  modules: readonly string[],
  cwd: string = process.cwd(),
): Promise<AgentCatalog> {
  const entries = builtInAgents().map((agent) => ({ agent, origin: 'the built-in agents' }));
  for (const modulePath of modules) {
    const file = path.resolve(cwd, modulePath);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`The agents module ${modulePath} (AGENTS) did not load: ${String(err)}`, {
        cause: err,
      });
    }
    let found: Map<string, Agent>;
    try {
      found = agentsOf(withDefaultExports(mod));
    } catch (err) {
      throw new Error(`The agents module ${modulePath}: ${(err as Error).message}`, { cause: err });
    }
    if (found.size === 0) {
      throw new Error(
        `The agents module ${modulePath} (AGENTS) exports no agent: export the values defineAgent() returns.`,
      );
    }
    for (const agent of found.values()) entries.push({ agent, origin: modulePath });
  }
  return new AgentCatalog(entries);
}

import path from 'node:path';
import { estimateOf, type Agent } from '../../agent/define';
import { ApiError } from '../../contract/errors';
import { thrownMessage } from '../../contract/json-data';
import { AgentsImportError, importAgents } from '../../fleet/agent-modules';
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
    let found: Map<string, Agent>;
    try {
      found = await importAgents(path.resolve(cwd, modulePath));
    } catch (err) {
      if (!(err instanceof AgentsImportError)) throw err;
      throw err.stage === 'import'
        ? new Error(`The agents module ${modulePath} (AGENTS) did not load: ${err.message}`, {
            cause: err.cause,
          })
        : new Error(`The agents module ${modulePath}: ${err.message}`, { cause: err.cause });
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

/** The agent's estimate for `input`, or why it has none (its estimate threw or gave no positive number). */
export function tryEstimate(agent: Agent, input: unknown): number | { why: string } {
  try {
    return estimateOf(agent, input);
  } catch (err) {
    return {
      why: `The agent "${agent.name}" could not estimate this input: ${thrownMessage(err, 'it threw')}`,
    };
  }
}

/**
 * The agent's estimate for `input`, or 400 `invalid_request` naming `path` when it has none: a
 * user's estimate function never answers 500.
 */
export function estimateAt(agent: Agent, input: unknown, path: string): number {
  const estimate = tryEstimate(agent, input);
  if (typeof estimate === 'number') return estimate;
  throw ApiError.invalid([{ path, message: estimate.why }]);
}

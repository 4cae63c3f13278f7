import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentsOf } from '../agent/define';
import type { Agent } from '../agent/define';
import { BUILT_IN_AGENT_NAMES } from './built-in-agents';

/** One agents module, loaded and checked: its absolute path and the agents it exports. */
export interface AgentModule {
  path: string;
  agents: string[];
}

/** A start-up error about the user's agents modules; its message names the module. */
export class AgentModuleError extends Error {
  override name = 'AgentModuleError';
}

/** Why an agents module gave no agents: it did not import, or its exports clash (agentsOf). */
export class AgentsImportError extends Error {
  override name = 'AgentsImportError';
  constructor(
    readonly stage: 'import' | 'declare',
    cause: unknown,
  ) {
    super(stage === 'import' ? String(cause) : (cause as Error).message, { cause });
  }
}

/** A module's exports, and those of its default export when that is an object (CommonJS imported from ESM). */
function withDefaultExports(mod: Record<string, unknown>): Record<string, unknown> {
  const fallback = mod.default;
  return typeof fallback === 'object' && fallback !== null ? { ...(fallback as object), ...mod } : mod;
}

/**
 * Imports the agents module at the absolute path `file` in Node and returns the agents it exports, by
 * name (the API and the worker both load agents modules through here). Throws AgentsImportError.
 */
export async function importAgents(file: string): Promise<Map<string, Agent>> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new AgentsImportError('import', err);
  }
  try {
    return agentsOf(withDefaultExports(mod));
  } catch (err) {
    throw new AgentsImportError('declare', err);
  }
}

/**
 * Imports each agents module in Node and checks it: it exports at least one defineAgent() value, and
 * no agent takes a built-in's name or another module's. Paths are resolved from `cwd`.
 */
export async function loadAgentModules(
  paths: readonly string[],
  cwd: string = process.cwd(),
): Promise<AgentModule[]> {
  const owners = new Map<string, string>(BUILT_IN_AGENT_NAMES.map((n) => [n, 'the built-in agents']));
  const modules: AgentModule[] = [];
  for (const given of [...new Set(paths.map((p) => path.resolve(cwd, p)))]) {
    let agents: string[];
    try {
      agents = [...(await importAgents(given)).keys()];
    } catch (err) {
      if (!(err instanceof AgentsImportError)) throw err;
      throw err.stage === 'import'
        ? new AgentModuleError(`Could not load agents module ${given}: ${err.message}`, { cause: err.cause })
        : new AgentModuleError(`Agents module ${given}: ${err.message}`);
    }
    if (agents.length === 0)
      throw new AgentModuleError(`Agents module ${given} exports no agent (export defineAgent() values).`);
    for (const name of agents) {
      const owner = owners.get(name);
      if (owner)
        throw new AgentModuleError(`Agents module ${given}: agent "${name}" is already defined by ${owner}.`);
      owners.set(name, given);
    }
    modules.push({ path: given, agents });
  }
  return modules;
}

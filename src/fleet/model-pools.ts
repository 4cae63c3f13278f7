import type { Agent } from '../agent/define';
import type { Config } from '../config';

/**
 * Which model pool admits an agent's runs: the pool of the model it declares (`defineAgent({ model })`,
 * `MODELS.<model>.pool`). An agent naming no model calls MODEL_DEFAULT, which is in the default pool,
 * as the built-ins' steps are: undefined.
 */
export function agentPool(
  models: Config['models'],
  agent: Pick<Agent, 'model'> | undefined,
): string | undefined {
  if (agent?.model === undefined) return undefined;
  return models.endpoints.find((e) => e.name === agent.model)?.pool;
}

/** Throws a message naming each agent whose declared model is not one of MODELS. */
export function checkAgentModels(
  models: Config['models'],
  agents: Iterable<Pick<Agent, 'name' | 'model'>>,
): void {
  const known = new Set(models.endpoints.map((e) => e.name));
  const wrong = [...agents].filter((a) => a.model !== undefined && !known.has(a.model));
  if (wrong.length > 0)
    throw new Error(
      wrong
        .map(
          (a) =>
            `Agent "${a.name}" declares model "${a.model}", which is not one of MODELS (${[...known].join(', ')}).`,
        )
        .join('\n'),
    );
}

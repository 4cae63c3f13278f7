import { AGENT_NAMES } from '../agents/catalog';

/** The built-in agents' names: every fleet worker's bundle holds them, and no user agent may take one. */
export const BUILT_IN_AGENT_NAMES: readonly string[] = AGENT_NAMES;

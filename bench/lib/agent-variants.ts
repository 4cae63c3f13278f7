import path from 'node:path';

/** Which agent a benchmark's runs use: the built-in `synthetic`, or its copy in user code. */
export type AgentsVariant = 'built-in' | 'user';

/** The user-code agents module (outside src/), and its agent: the built-in synthetic's load. */
export const USER_AGENTS_MODULE = path.join(__dirname, '..', 'agents', 'synthetic.ts');
export const USER_AGENT = 'bench-synthetic';

/** The agent name a variant's runs are submitted with. */
export function agentOf(variant: AgentsVariant): string {
  return variant === 'user' ? USER_AGENT : 'synthetic';
}

const CHOICES: Record<string, AgentsVariant[]> = {
  'built-in': ['built-in'],
  user: ['user'],
  both: ['built-in', 'user'],
};

/**
 * Takes `--agents built-in|user|both` (default built-in) off a scenario's arguments: the variants to
 * run, in order, and the other arguments.
 */
export function agentsFlag(argv: string[]): { agents: string; variants: AgentsVariant[]; rest: string[] } {
  const i = argv.indexOf('--agents');
  if (i < 0) return { agents: 'built-in', variants: CHOICES['built-in']!, rest: argv };
  const agents = argv[i + 1] ?? '';
  const variants = CHOICES[agents];
  if (!variants) throw new Error(`--agents takes ${Object.keys(CHOICES).join(', ')}; got "${agents}"`);
  return { agents, variants, rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
}

/** A scenario's data for every variant it ran: the first's, with the user-code variant's beside it. */
export type VariantsData<T> = T & { agents: AgentsVariant; userAgents?: T & { agents: 'user' } };

/**
 * Runs a scenario once per variant, one after the other in this process, each on a stack of its own
 * (so both meet the same machine), and returns the first's data with the user variant's under
 * `userAgents` when both ran.
 */
export async function runVariants<T extends object>(
  variants: AgentsVariant[],
  run: (variant: AgentsVariant) => Promise<T>,
): Promise<VariantsData<T>> {
  const out: { agents: AgentsVariant; data: T }[] = [];
  for (const v of variants) out.push({ agents: v, data: await run(v) });
  const [first, second] = out;
  return {
    ...first!.data,
    agents: first!.agents,
    ...(second ? { userAgents: { ...second.data, agents: 'user' as const } } : {}),
  };
}

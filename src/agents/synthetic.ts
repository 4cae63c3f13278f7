import { z } from 'zod';
import { defineAgent } from '../agent';

export const SyntheticInputSchema = z.strictObject({
  steps: z.int().min(1).max(1000),
  tokensPerStep: z.int().min(1).max(100_000).default(100),
  stepMs: z.int().min(0).max(600_000).default(0),
  effect: z.boolean().default(false),
  failAtStep: z.int().min(1).optional(),
  /** Tools to call once each, in order, after the steps (one not declared is refused and fails the run). */
  tools: z.array(z.string().min(1).max(64)).max(10).optional(),
});
export type SyntheticInput = z.output<typeof SyntheticInputSchema>;

/**
 * The most a synthetic step's prompt can be billed (the longest run id, the largest step number):
 * a step is billed at least this plus one token, however few `tokensPerStep` it asks for. Counted in
 * the estimate so the run's reservation covers every step without asking for top-ups
 * (test/unit/agents/catalog.test.ts checks it against the model call's worst case).
 */
export const STEP_PROMPT_ALLOWANCE = 31;

export interface SyntheticResult {
  steps: number;
  tokens: number;
  /** Whether this run's effect was applied by this run (null: it asked for none). */
  effectApplied: boolean | null;
  tools?: Record<string, unknown>[];
}

const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

export const synthetic = defineAgent({
  name: 'synthetic',
  description:
    'Load and acceptance agent: `steps` model calls of `tokensPerStep` tokens, each lasting at least `stepMs`; ' +
    'optionally one idempotent effect; `failAtStep` fails that step for good; `tools` calls those tools ' +
    '(it declares only `lookup`: any other is refused).',
  input: SyntheticInputSchema,
  estimate: (input) => input.steps * Math.max(input.tokensPerStep, STEP_PROMPT_ALLOWANCE),
  tools: ['lookup'],
  async run(ctx, input): Promise<SyntheticResult> {
    // Inputs were parsed at the door; the defaults here cover runs started without it (tests, drills).
    const steps = num(input.steps, 1);
    const tokensPerStep = num(input.tokensPerStep, 100);
    const stepMs = num(input.stepMs, 0);
    const failAtStep = typeof input.failAtStep === 'number' ? input.failAtStep : undefined;
    let tokens = 0;
    for (let i = 1; i <= steps; i++) {
      tokens += await ctx.step(tokensPerStep, { minMs: stepMs, fail: failAtStep === i });
    }
    // `effect` is the fleet's own once-only record (no worker function, nothing to declare).
    const effectApplied = input.effect === true ? (await ctx.effect('effect')).applied : null;
    // Each named tool is called once, in order (an undeclared one is refused: the acceptance test of that).
    const tools = Array.isArray(input.tools) ? input.tools.map(String) : [];
    const toolResults: Record<string, unknown>[] = [];
    for (const name of tools) toolResults.push(await ctx.tool(name, { incident: `synthetic-${name}` }));
    return tools.length > 0
      ? { steps, tokens, effectApplied, tools: toolResults }
      : { steps, tokens, effectApplied };
  },
});

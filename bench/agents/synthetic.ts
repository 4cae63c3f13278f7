import { z } from 'zod';
import { defineAgent } from '../../src/agent';

/**
 * The built-in `synthetic` agent's load, written in user code the way a platform team writes its own
 * agent (zod and the authoring API only; `fairway/agent` in a user's project). The benchmarks run it
 * with `--agents user` (or `both`) on a worker started with this module, beside the built-in agent.
 *
 * Each step is `ctx.step(tokensPerStep)`, the same metered call the built-in's steps make (same
 * prompt, reservation and charge), and the estimate is the built-in's, so admission, the governor and
 * the ledger see the same tokens per run.
 */

/** The most a step's prompt can be billed: as the built-in's (src/agents/synthetic.ts). */
const STEP_PROMPT_ALLOWANCE = 31;

export const benchSynthetic = defineAgent({
  name: 'bench-synthetic',
  description: "The built-in synthetic agent's steps and effect, defined outside src/ for the benchmarks.",
  input: z.strictObject({
    steps: z.int().min(1).max(1000),
    tokensPerStep: z.int().min(1).max(100_000).default(100),
    stepMs: z.int().min(0).max(600_000).default(0),
    effect: z.boolean().default(false),
  }),
  estimate: ({ steps, tokensPerStep }) => steps * Math.max(tokensPerStep, STEP_PROMPT_ALLOWANCE),
  async run(ctx, { steps, tokensPerStep, stepMs, effect }) {
    let tokens = 0;
    for (let i = 0; i < steps; i++) tokens += await ctx.step(tokensPerStep, { minMs: stepMs });
    // 'effect' is the fleet's own once-only record: no worker function, nothing to declare.
    const effectApplied = effect ? (await ctx.effect('effect')).applied : null;
    return { steps, tokens, effectApplied };
  },
});

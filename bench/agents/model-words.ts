import { z } from 'zod';
import { defineAgent } from '../../src/agent';
import type { ModelRequest } from '../../src/agent';

/**
 * A user's agent for the drills, defined outside src/ with the authoring API only: each run makes
 * `calls` ctx.model calls whose prompt repeats a word `words` times (more for each later call), so
 * the prompt's length, and with it what the tokenizer reserves, varies with the input. The calls
 * alternate between the two dialects (sim-gpt: OpenAI, sim-claude: Anthropic).
 */
export const ModelWordsInputSchema = z.strictObject({
  words: z.int().min(1).max(20_000),
  calls: z.int().min(1).max(16).default(2),
  maxTokens: z.int().min(1).max(4096).default(64),
  effect: z.boolean().default(false),
});
export type ModelWordsInput = z.output<typeof ModelWordsInputSchema>;

/** The model requests a run of `input` sends, in order. */
export function modelWordsRequests(input: ModelWordsInput): ModelRequest[] {
  return Array.from({ length: input.calls }, (_, i) => ({
    model: (input.words + i) % 2 === 0 ? 'sim-gpt' : 'sim-claude',
    maxTokens: input.maxTokens,
    messages: [
      { role: 'system' as const, content: `Count the words; call ${i + 1} of ${input.calls}.` },
      { role: 'user' as const, content: 'ledger '.repeat(input.words * (i + 1)).trimEnd() },
    ],
  }));
}

export const modelWords = defineAgent({
  name: 'model-words',
  description: 'Makes ctx.model calls whose prompt repeats a word as many times as the input says.',
  input: ModelWordsInputSchema,
  // About a token a word (a third more in the Anthropic dialect), plus each call's completion.
  estimate: ({ words, calls, maxTokens }) => calls * (maxTokens + 32) + 2 * words * calls * (calls + 1),
  async run(ctx, input) {
    const tokens: number[] = [];
    for (const request of modelWordsRequests(input))
      tokens.push((await ctx.model(request)).usage.totalTokens);
    // 'effect' is the fleet's own once-only record: no worker function, nothing to declare.
    const effectApplied = input.effect ? (await ctx.effect('effect')).applied : null;
    return { tokens, effectApplied };
  },
});

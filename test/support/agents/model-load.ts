import { z } from 'zod';
// The simulator's seeded PRNG (pure: it bundles into workflow code): the same seed, the same prompts.
import { seededRandom } from '../../../src/standins/modelplane/latency';
import { defineAgent } from '../../../src/agent';
import type { ModelRequest } from '../../../src/agent';

/**
 * A user's agents module for the ledger drills: each run makes `calls` ctx.model calls whose prompt
 * length (50 to 3,000 characters) and maxTokens (16 to 512) are drawn from its seed, so the
 * tokenizer's count of each prompt, not a fixed step size, decides what each call reserves. Its
 * estimate is deliberately small: the per-call reservation is what keeps the budget.
 */
export const ModelLoadInputSchema = z.object({
  seed: z.int().min(0),
  calls: z.int().min(1).max(16).default(4),
});
export type ModelLoadInput = z.output<typeof ModelLoadInputSchema>;

const WORDS = [
  'ledger',
  'tokenizer',
  'reserve',
  'budget',
  'governor',
  'fleet',
  'x9',
  'Δ',
  '—',
  'q?',
  '{}',
  '42',
];

/** The model requests a run of `input` sends, in order (both dialects: the model alternates by seed). */
export function modelLoadRequests(input: ModelLoadInput): ModelRequest[] {
  const next = seededRandom(input.seed);
  return Array.from({ length: input.calls }, (_, i) => {
    const chars = 50 + Math.floor(next() * 2951);
    const maxTokens = 16 + Math.floor(next() * 497);
    let text = '';
    while (text.length < chars) text += `${WORDS[Math.floor(next() * WORDS.length)]} `;
    return {
      model: (input.seed + i) % 2 === 0 ? 'sim-gpt' : 'sim-claude',
      maxTokens,
      messages: [
        { role: 'system' as const, content: `Call ${i} of run seed ${input.seed}.` },
        { role: 'user' as const, content: text.slice(0, chars) },
      ],
    };
  });
}

export const modelLoad = defineAgent({
  name: 'model-load',
  description: 'Makes seeded ctx.model calls of varying prompt length and maxTokens.',
  input: ModelLoadInputSchema,
  estimate: 100,
  async run(ctx, input) {
    const tokens: number[] = [];
    for (const request of modelLoadRequests(input)) {
      const c = await ctx.model(request);
      tokens.push(c.usage.totalTokens);
    }
    return { tokens };
  },
});

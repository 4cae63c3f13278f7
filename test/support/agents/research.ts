import { z } from 'zod';
import { defineAgent } from '../../../src/agent';

/**
 * A user's agents module, outside src/: it imports only zod and the authoring API (`fairway/agent`
 * in a user's project). One tool, one effect, then one model step.
 */
export const research = defineAgent({
  name: 'research',
  description: 'Looks the question up, thinks once, publishes the answer.',
  input: z.object({
    question: z.string().min(1),
    holdMs: z.int().min(0).default(0),
    /** How long the effect's first attempt holds before it delivers (a worker killed meanwhile). */
    effectHoldMs: z.int().min(0).default(0),
    /** What the effect answers after it acted: JSON, or a value that is not (a user's mistake). */
    effectAnswer: z.enum(['json', 'bigint', 'cycle']).default('json'),
    /** The effect's downstream refuses every attempt before anything is delivered. */
    effectRefused: z.boolean().default(false),
  }),
  estimate: () => 400,
  tools: ['search'],
  effects: ['publish'],
  async run(ctx, input) {
    const found = await ctx.tool<{ hit: string }>('search', { q: input.question });
    const published = await ctx.effect('publish', {
      answer: `${input.question} -> ${found.hit}`,
      holdMs: input.effectHoldMs,
      answerAs: input.effectAnswer,
      refused: input.effectRefused,
    });
    // Held after the effect: a worker killed here leaves the effect done and the run unfinished.
    const tokens = await ctx.step(50, { minMs: input.holdMs });
    return { hit: found.hit, tokens, published };
  },
});

/** A second agent in the same module: its runs live on their own task queue. */
export const recap = defineAgent({
  name: 'recap',
  input: z.object({ text: z.string() }),
  estimate: 100,
  async run(ctx, input) {
    return { text: input.text, tokens: await ctx.step(10) };
  },
});

import { z } from 'zod';
import { defineAgent } from '../../../../src/agent';

/** A user's agents module, as AGENTS names it: two agents and an export that is none. */
export const research = defineAgent({
  name: 'research',
  description: 'Answers a question from what it finds.',
  input: z.strictObject({ question: z.string().min(1).max(500), depth: z.int().min(1).max(5).default(1) }),
  estimate: (input) => 1000 * input.depth,
  tools: ['search'],
  effects: ['publish'],
  gate: { timeoutSeconds: 3600, onTimeout: 'reject' },
  run: async (_ctx, input) => ({ answer: input.question }),
});

export const shortSummary = defineAgent({
  name: 'short-summary',
  input: z.object({ text: z.string() }),
  estimate: 500,
  run: async () => ({}),
});

export const notAnAgent = { name: 'research' };

import { z } from 'zod';
import { defineAgent } from '../../../src/agent';

/**
 * Two agents on two model pools (test/integration/model-pools.test.ts): `pool-storm` declares the
 * `storm` model (its own provider and pool), `pool-calm` declares none (the default model and pool).
 * Each run makes one small model call.
 */
const Input = z.object({ n: z.int().min(0).default(0) });

const call = (model?: string) => ({
  ...(model === undefined ? {} : { model }),
  maxTokens: 16,
  messages: [{ role: 'user' as const, content: 'Reply in one word.' }],
});

export const poolStorm = defineAgent({
  name: 'pool-storm',
  model: 'storm',
  input: Input,
  estimate: 64,
  async run(ctx) {
    return (await ctx.model(call())).usage.totalTokens;
  },
});

export const poolCalm = defineAgent({
  name: 'pool-calm',
  input: Input,
  estimate: 64,
  async run(ctx) {
    return (await ctx.model(call())).usage.totalTokens;
  },
});

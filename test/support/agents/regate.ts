import { z } from 'zod';
import { defineAgent } from '../../../src/agent';

/**
 * An agent that asks again: each rejected gate opens the next (up to `gates`), proposing its own
 * attempt; the first approval ends the run with every verdict and who gave it.
 */
export const regate = defineAgent({
  name: 'regate',
  input: z.strictObject({ gates: z.int().min(1).max(5).default(3) }),
  estimate: 100,
  gate: { timeoutSeconds: 3600, onTimeout: 'reject' },
  async run(ctx, input) {
    const verdicts: string[] = [];
    for (let attempt = 1; attempt <= input.gates; attempt++) {
      const verdict = await ctx.gate({ proposal: { attempt } });
      verdicts.push(`${verdict.decision}:${verdict.by}`);
      if (verdict.decision === 'approve') break;
    }
    return { verdicts };
  },
});

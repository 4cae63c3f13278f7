import { z } from 'zod';
import { defineAgent } from '../../../src/agent';
import type { ModelRequest } from '../../../src/agent';

/**
 * A user's agents module, as a platform team would write it outside Fairway's source: zod and the
 * authoring API only (`fairway/agent`, here by its relative path). test/support/agents/workflows.ts
 * bundles it with Fairway's workflows.
 */
export const EchoInputSchema = z.object({
  question: z.string().min(1),
  model: z.enum(['sim-gpt', 'sim-claude']).default('sim-gpt'),
  /** Characters of context sent with the question (a large conversation). */
  contextChars: z.int().min(0).default(0),
  /** A tool to call after `lookup` that the agent did not declare (refused: the run fails). */
  undeclaredTool: z.string().optional(),
  /** An effect to apply that the agent did not declare (refused: the run fails). */
  undeclaredEffect: z.string().optional(),
  /** A user's mistake: a step of NaN tokens, or a model call without a finite maxTokens. */
  badTokens: z.enum(['step-nan', 'model-infinite']).optional(),
  /** A user's mistake: a result, or a gate's proposal, that is not JSON (a BigInt). */
  notJson: z.enum(['result', 'proposal']).optional(),
  /** A user's mistake: after the tool, awaits a promise of its own that never settles. */
  hang: z.boolean().optional(),
});
export type EchoInput = z.output<typeof EchoInputSchema>;

/** The model request the echo agent sends for `input` (the test computes the simulator's answer from it). */
export function echoRequest(input: EchoInput, record: unknown): ModelRequest {
  const context = 'The fleet reserved the worst case first. '.repeat(Math.ceil(input.contextChars / 42));
  return {
    model: input.model,
    maxTokens: 64,
    messages: [
      { role: 'system', content: `Answer briefly. Record: ${JSON.stringify(record)}` },
      ...(input.contextChars > 0
        ? [{ role: 'user' as const, content: context.slice(0, input.contextChars) }]
        : []),
      { role: 'user', content: input.question },
    ],
  };
}

export const echo = defineAgent({
  name: 'echo',
  description: 'Looks the question up, asks the model, asks a human to approve the answer, records it once.',
  input: EchoInputSchema,
  estimate: (input) => 2_000 + Math.ceil(input.contextChars / 2),
  tools: ['lookup'],
  gate: { timeoutSeconds: 600, onTimeout: 'reject' },
  async run(ctx, input) {
    const { record } = await ctx.tool('lookup', { incident: input.question });
    if (input.hang) await new Promise(() => undefined);
    if (input.undeclaredTool) await ctx.tool(input.undeclaredTool, { incident: input.question });
    if (input.undeclaredEffect) await ctx.effect(input.undeclaredEffect, {});
    if (input.notJson === 'result') return { n: 1n };
    if (input.notJson === 'proposal') await ctx.gate({ proposal: { n: 1n } });
    if (input.badTokens === 'step-nan') await ctx.step(Number.NaN);
    if (input.badTokens === 'model-infinite')
      await ctx.model({ ...echoRequest(input, record), maxTokens: Number.POSITIVE_INFINITY });
    const draft = await ctx.model(echoRequest(input, record));
    const verdict = await ctx.gate({ proposal: { answer: draft.text, record } });
    const effect = verdict.decision === 'approve' ? await ctx.effect('effect') : null;
    return {
      runId: ctx.runId,
      tenant: ctx.tenant,
      answer: draft.text,
      usage: draft.usage,
      record,
      verdict,
      effect,
    };
  },
});

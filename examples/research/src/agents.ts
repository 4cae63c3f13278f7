import { z } from 'zod';
import { defineAgent } from 'fairway/agent';
import type { Hit } from './tools';

/**
 * Your agents: plain defineAgent() values, imported by Fairway's API (for their input schemas and
 * estimates) and bundled into your worker's workflow code. So this file imports only zod and
 * `fairway/agent`: no I/O here. The tool and the effect run in the worker (src/tools.ts, src/effects.ts).
 */

export const research = defineAgent({
  name: 'research',
  description: 'Answers a question from search results; a human approves the answer before it is published.',
  input: z.object({ question: z.string().min(3).max(500) }),
  // Tokens: what admission weighs and the tenant's budget reserves before the run starts.
  estimate: (input) => 1_500 + input.question.length,
  tools: ['search'],
  effects: ['publish'],
  gate: { timeoutSeconds: 4 * 3600, onTimeout: 'reject' },
  async run(ctx, input) {
    const found = await ctx.tool<{ query: string; hits: Hit[] }>('search', { q: input.question });
    const sources = found.hits.map((h) => `- ${h.title} (${h.url}): ${h.snippet}`).join('\n');
    // No `model`: the worker's MODEL_DEFAULT (sim-gpt, the OpenAI dialect, on the simulator).
    const draft = await ctx.model({
      messages: [
        { role: 'system', content: 'Answer in two sentences, from the sources only.' },
        { role: 'user', content: `${input.question}\n\nSources:\n${sources}` },
      ],
      maxTokens: 300,
    });
    const verdict = await ctx.gate({
      proposal: { question: input.question, answer: draft.text, sources: found.hits },
    });
    const approved = verdict.decision === 'approve';
    // Keyed by run and name: delivered once, however often this line runs again after a crash.
    const delivery = approved
      ? await ctx.effect('publish', { question: input.question, answer: draft.text })
      : null;
    return {
      answer: draft.text,
      hits: found.hits,
      model: draft.model,
      usage: draft.usage,
      published: approved,
      decidedBy: verdict.by,
      delivery: delivery?.result ?? null,
    };
  },
});

export const summarize = defineAgent({
  name: 'summarize',
  description: 'Summarizes a text with a model of the Anthropic dialect.',
  input: z.object({ text: z.string().min(1).max(20_000), words: z.int().min(5).max(200).default(40) }),
  estimate: (input) => Math.ceil(input.text.length / 2) + 400,
  async run(ctx, input) {
    const out = await ctx.model({
      model: 'sim-claude',
      messages: [{ role: 'user', content: `Summarize in at most ${input.words} words:\n\n${input.text}` }],
      maxTokens: 200,
      temperature: 0,
    });
    return { summary: out.text, model: out.model, finishReason: out.finishReason, usage: out.usage };
  },
});

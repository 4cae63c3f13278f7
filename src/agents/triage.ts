import { z } from 'zod';
import { defineAgent } from '../agent';
import { GATES } from './gates';

export const TriageInputSchema = z.strictObject({
  incident: z.string().min(1).max(2000),
  severity: z.enum(['low', 'high']).optional(),
});
export type TriageInput = z.output<typeof TriageInputSchema>;

/** What triage proposes at its gate: the incident, the record it read, and what it does once approved. */
export interface TriageProposal {
  incident: string;
  record: unknown;
  action: string;
}

export interface TriageResult {
  incident: string;
  resolution: 'rejected' | 'remediated';
  note?: string;
  tokens: number;
  record: unknown;
}

export const triage = defineAgent({
  name: 'triage',
  description:
    'Incident triage: reads the incident (`lookup` tool), proposes an action, waits for a human to approve ' +
    'it, then pages (`pager` tool).',
  input: TriageInputSchema,
  estimate: () => 1500,
  tools: ['lookup', 'pager'],
  gate: GATES.triage,
  async run(ctx, input): Promise<TriageResult> {
    // Reads the incident through the lookup tool, then acts, once approved, through the pager tool.
    const { record } = await ctx.tool('lookup', { incident: input.incident });
    let tokens = await ctx.step(1000);
    const proposal: TriageProposal = {
      incident: input.incident,
      record,
      action: 'page the on-call engineer (pager tool)',
    };
    const verdict = await ctx.gate({ proposal });
    if (verdict.decision === 'reject')
      return { incident: input.incident, resolution: 'rejected', note: verdict.note, tokens, record };
    tokens += await ctx.step(500);
    await ctx.tool('pager', { incident: input.incident, record }, { key: 'remediation' });
    return { incident: input.incident, resolution: 'remediated', note: verdict.note, tokens, record };
  },
});

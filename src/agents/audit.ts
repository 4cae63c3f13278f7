import { z } from 'zod';
import { defineAgent } from '../agent';

export const AuditInputSchema = z.strictObject({
  targets: z.array(z.string().min(1).max(500)).min(1).max(50),
});
export type AuditInput = z.output<typeof AuditInputSchema>;

export interface AuditResult {
  findings: { target: string; tokens: number; finding?: unknown }[];
}

export const audit = defineAgent({
  name: 'audit',
  description: 'Fan-out audit: checks every target (`scanner` tool) and reports the findings together.',
  input: AuditInputSchema,
  estimate: (input) => 500 * input.targets.length,
  tools: ['scanner'],
  async run(ctx, input): Promise<AuditResult> {
    const targets = Array.isArray(input.targets) ? input.targets.map(String) : [];
    const findings: AuditResult['findings'] = [];
    // Fan out a few at a time inside the run's one slot: the chunk's model steps in parallel, then one
    // scanner call for the chunk's targets (a call per target would cost three history events each).
    for (let i = 0; i < targets.length; i += 4) {
      const chunk = targets.slice(i, i + 4);
      const tokens = await Promise.all(chunk.map(() => ctx.step(500)));
      const scan = await ctx.tool('scanner', { targets: chunk }, { key: `scan-${i}` });
      const found = Array.isArray(scan.findings) ? (scan.findings as { finding?: unknown }[]) : [];
      findings.push(
        ...chunk.map((target, j) => ({ target, tokens: tokens[j] ?? 0, finding: found[j]?.finding })),
      );
    }
    return { findings };
  },
});

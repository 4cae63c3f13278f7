/**
 * What each built-in agent does, as deterministic workflow code. Inputs were validated at the door
 * (src/agents/catalog.ts); here they are only read.
 */
export interface AgentContext {
  /** One model call of `tokens`, lasting at least `minMs`; `fail` makes it fail for good after using them. */
  step(tokens: number, opts?: { minMs?: number; fail?: boolean }): Promise<number>;
  /** One idempotent effect keyed by run and `name`. */
  effect(name: string): Promise<boolean>;
  /** A human gate: the run gives its slot back while it waits. */
  gate(): Promise<{ decision: 'approve' | 'reject'; note?: string }>;
  /**
   * Calls a tool through its own identity (src/workflows/tools.ts); a tool the agent did not declare is
   * refused, recorded in the run's view, and fails the run. `key`: the call's idempotency key name.
   */
  tool(name: string, args: Record<string, unknown>, key?: string): Promise<Record<string, unknown>>;
}

type Json = Record<string, unknown>;
const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

async function synthetic(input: Json, ctx: AgentContext): Promise<unknown> {
  const steps = num(input.steps, 1);
  const tokensPerStep = num(input.tokensPerStep, 100);
  const stepMs = num(input.stepMs, 0);
  const failAtStep = typeof input.failAtStep === 'number' ? input.failAtStep : undefined;
  let tokens = 0;
  for (let i = 1; i <= steps; i++) {
    tokens += await ctx.step(tokensPerStep, { minMs: stepMs, fail: failAtStep === i });
  }
  const effectApplied = input.effect === true ? await ctx.effect('effect') : null;
  // Each named tool is called once, in order (an undeclared one is refused: the acceptance test of that).
  const tools = Array.isArray(input.tools) ? input.tools.map(String) : [];
  const toolResults: Record<string, unknown>[] = [];
  for (const name of tools) toolResults.push(await ctx.tool(name, { incident: `synthetic-${name}` }));
  return tools.length > 0
    ? { steps, tokens, effectApplied, tools: toolResults }
    : { steps, tokens, effectApplied };
}

async function triage(input: Json, ctx: AgentContext): Promise<unknown> {
  // Reads the incident through the lookup tool, then acts, once approved, through the pager tool.
  const { record } = await ctx.tool('lookup', { incident: input.incident });
  let tokens = await ctx.step(1000);
  const verdict = await ctx.gate();
  if (verdict.decision === 'reject')
    return { incident: input.incident, resolution: 'rejected', note: verdict.note, tokens, record };
  tokens += await ctx.step(500);
  await ctx.tool('pager', { incident: input.incident, record }, 'remediation');
  return { incident: input.incident, resolution: 'remediated', note: verdict.note, tokens, record };
}

async function audit(input: Json, ctx: AgentContext): Promise<unknown> {
  const targets = Array.isArray(input.targets) ? input.targets.map(String) : [];
  const findings: { target: string; tokens: number; finding?: unknown }[] = [];
  // Fan out a few at a time inside the run's one slot: the chunk's model steps in parallel, then one
  // scanner call for the chunk's targets (a call per target would cost three history events each).
  for (let i = 0; i < targets.length; i += 4) {
    const chunk = targets.slice(i, i + 4);
    const tokens = await Promise.all(chunk.map(() => ctx.step(500)));
    const scan = await ctx.tool('scanner', { targets: chunk }, `scan-${i}`);
    const found = Array.isArray(scan.findings) ? (scan.findings as { finding?: unknown }[]) : [];
    findings.push(
      ...chunk.map((target, j) => ({ target, tokens: tokens[j] ?? 0, finding: found[j]?.finding })),
    );
  }
  return { findings };
}

const AGENTS: Record<string, (input: Json, ctx: AgentContext) => Promise<unknown>> = {
  synthetic,
  triage,
  audit,
};

export async function runAgent(agent: string, input: unknown, ctx: AgentContext): Promise<unknown> {
  const impl = AGENTS[agent];
  if (!impl) throw new Error(`unknown agent ${agent}`);
  return impl((input ?? {}) as Json, ctx);
}

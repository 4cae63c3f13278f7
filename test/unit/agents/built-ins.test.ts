import { describe, expect, it } from 'vitest';
import { agentsOf } from '../../../src/agent';
import type { AgentContext, GateDecision, GateOptions } from '../../../src/agent';
import { AGENT_NAMES, AGENTS, BUILT_IN_AGENTS, getAgent } from '../../../src/agents/catalog';
import { GATES } from '../../../src/agents/gates';

/** A context that records what the agent asked for and answers as a fleet would. */
function fakeContext(decision: GateDecision['decision'] = 'approve') {
  const calls: string[] = [];
  const gates: GateOptions[] = [];
  const ctx: AgentContext = {
    runId: 'run-t-1',
    tenant: 't',
    model: () => Promise.reject(new Error('the built-ins make no free-form model call')),
    step: async (tokens, opts) => {
      calls.push(`step:${tokens}${opts?.fail ? ':fail' : ''}`);
      return tokens;
    },
    tool: async <T extends Record<string, unknown>>(
      name: string,
      args: Record<string, unknown>,
      opts?: { key?: string },
    ): Promise<T> => {
      calls.push(`tool:${name}${opts?.key ? `:${opts.key}` : ''}`);
      if (name === 'lookup') return { record: { id: args.incident, owner: 'db-team' } } as unknown as T;
      if (name === 'scanner')
        return { findings: (args.targets as string[]).map((t) => ({ finding: `ok:${t}` })) } as unknown as T;
      return {} as T;
    },
    gate: async (g) => {
      gates.push(g);
      calls.push('gate');
      return { decision, note: 'n', by: 'key-1', at: '2026-01-01T00:00:00.000Z', timedOut: false };
    },
    effect: async (name) => {
      calls.push(`effect:${name}`);
      return { applied: true };
    },
  };
  return { ctx, calls, gates };
}

describe('the built-in agents', () => {
  it('are one agents module, registered by name, each with a function estimate', () => {
    expect([...agentsOf(BUILT_IN_AGENTS).keys()]).toEqual(AGENT_NAMES);
    for (const name of AGENT_NAMES) {
      expect(agentsOf(BUILT_IN_AGENTS).get(name)).toBe(AGENTS[name]);
      expect(typeof AGENTS[name].estimate).toBe('function');
    }
    expect(getAgent('triage')?.gate).toEqual(GATES.triage);
    expect(getAgent('synthetic')?.gate).toBeUndefined();
    expect(AGENTS.synthetic.tools).toEqual(['lookup']);
    expect(AGENTS.triage.tools).toEqual(['lookup', 'pager']);
    expect(AGENTS.audit.tools).toEqual(['scanner']);
    for (const name of AGENT_NAMES) expect(AGENTS[name].effects ?? []).toEqual([]);
  });

  it('triage proposes what it will do, then pages once approved', async () => {
    const { ctx, calls, gates } = fakeContext('approve');
    const out = await AGENTS.triage.run(ctx, { incident: 'disk full' });
    expect(gates).toEqual([
      {
        proposal: {
          incident: 'disk full',
          record: { id: 'disk full', owner: 'db-team' },
          action: 'page the on-call engineer (pager tool)',
        },
      },
    ]);
    expect(calls).toEqual(['tool:lookup', 'step:1000', 'gate', 'step:500', 'tool:pager:remediation']);
    expect(out).toMatchObject({ resolution: 'remediated', note: 'n', tokens: 1500 });
  });

  it('triage stops, paging nobody, when rejected', async () => {
    const { ctx, calls } = fakeContext('reject');
    const out = await AGENTS.triage.run(ctx, { incident: 'x' });
    expect(calls).toEqual(['tool:lookup', 'step:1000', 'gate']);
    expect(out).toMatchObject({ resolution: 'rejected', tokens: 1000 });
  });

  it('synthetic steps, applies the built-in effect and calls the tools it was given', async () => {
    const { ctx, calls } = fakeContext();
    const input = AGENTS.synthetic.input.parse({
      steps: 2,
      tokensPerStep: 7,
      effect: true,
      tools: ['lookup'],
    });
    const out = await AGENTS.synthetic.run(ctx, input);
    expect(calls).toEqual(['step:7', 'step:7', 'effect:effect', 'tool:lookup']);
    expect(out).toMatchObject({ steps: 2, tokens: 14, effectApplied: true });
    expect(out.tools).toHaveLength(1);
  });

  it('audit scans four targets a call, keyed by chunk', async () => {
    const { ctx, calls } = fakeContext();
    const targets = ['a', 'b', 'c', 'd', 'e'];
    const out = await AGENTS.audit.run(ctx, { targets });
    expect(calls.filter((c) => c.startsWith('tool'))).toEqual(['tool:scanner:scan-0', 'tool:scanner:scan-4']);
    expect(out.findings.map((f) => f.finding)).toEqual(targets.map((t) => `ok:${t}`));
  });
});

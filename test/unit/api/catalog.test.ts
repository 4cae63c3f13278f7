import { describe, expect, it } from 'vitest';
import { AGENTS, estimateTokens, getAgent } from '../../../src/agents/catalog';

describe('agent catalog', () => {
  it('knows its agents and nothing inherited', () => {
    expect(Object.keys(AGENTS)).toEqual(['synthetic', 'triage', 'audit']);
    expect(getAgent('triage')?.gate).toBeDefined();
    expect(getAgent('toString')).toBeUndefined();
  });

  it('estimates from the parsed input', () => {
    expect(estimateTokens('synthetic', { steps: 3 })).toBe(300);
    // A step is billed its prompt too: tiny steps are estimated at the prompt allowance (31) each.
    expect(estimateTokens('synthetic', { steps: 3, tokensPerStep: 7 })).toBe(93);
    expect(estimateTokens('triage', { incident: 'x' })).toBe(1500);
    expect(estimateTokens('audit', { targets: ['a', 'b'] })).toBe(1000);
    expect(() => estimateTokens('synthetic', { steps: 1001 })).toThrow();
    expect(() => estimateTokens('nope', {})).toThrow(/Unknown agent/);
  });

  it('applies synthetic defaults and bounds', () => {
    const input = AGENTS.synthetic.input.parse({ steps: 1 });
    expect(input).toEqual({ steps: 1, tokensPerStep: 100, stepMs: 0, effect: false });
    expect(AGENTS.synthetic.input.safeParse({ steps: 1, stepMs: 600_001 }).success).toBe(false);
    expect(AGENTS.synthetic.input.safeParse({ steps: 1, failAtStep: 0 }).success).toBe(false);
    expect(AGENTS.audit.input.safeParse({ targets: Array.from({ length: 51 }, () => 't') }).success).toBe(
      false,
    );
  });
});

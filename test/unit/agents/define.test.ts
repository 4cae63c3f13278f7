import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { agentsOf, agentTaskQueue, defineAgent, estimateOf, isAgent } from '../../../src/agent';

const input = z.object({ question: z.string(), words: z.int().default(10) });
const research = defineAgent({
  name: 'research',
  input,
  estimate: (i) => i.words * 100.5,
  tools: ['search'],
  run: async (_ctx, i) => ({ answer: i.question }),
});

describe('defineAgent', () => {
  it('returns a frozen agent that isAgent recognises', () => {
    expect(research.kind).toBe('fairway.agent');
    expect(Object.isFrozen(research)).toBe(true);
    expect(isAgent(research)).toBe(true);
    expect(isAgent({ ...research, kind: 'other' })).toBe(false);
    expect(isAgent(null)).toBe(false);
  });

  it('refuses a malformed declaration at once', () => {
    const base = { input, estimate: 1, run: async () => null };
    expect(() => defineAgent({ ...base, name: 'Research' })).toThrow(/must match/);
    expect(() => defineAgent({ ...base, name: '9lives' })).toThrow(/must match/);
    expect(() => defineAgent({ ...base, name: 'a'.repeat(64) })).toThrow(/must match/);
    expect(() => defineAgent({ ...base, name: 'ok', estimate: 0 })).toThrow(/estimate/);
    expect(() => defineAgent({ ...base, name: 'ok', estimate: Number.NaN })).toThrow(/estimate/);
    expect(() => defineAgent({ ...base, name: 'ok', run: undefined as never })).toThrow(/run\(ctx, input\)/);
    expect(defineAgent({ ...base, name: 'a'.repeat(63) }).name).toHaveLength(63);
  });
});

describe('agentsOf', () => {
  it('finds every defineAgent export by name and ignores the rest', () => {
    const found = agentsOf({ research, helper: () => 1, schema: input, n: 3, again: research });
    expect([...found.keys()]).toEqual(['research']);
    expect(found.get('research')).toBe(research);
  });

  it('throws on two different agents of one name', () => {
    const twin = defineAgent({ ...research, run: async () => null });
    expect(() => agentsOf({ research, twin })).toThrow(/Two agents are called "research"/);
  });
});

describe('estimateOf', () => {
  it('is the number, or the function of the parsed input, rounded up', () => {
    expect(estimateOf(research, input.parse({ question: 'q' }))).toBe(1005);
    expect(estimateOf(defineAgent({ ...research, estimate: 42 }), {})).toBe(42);
  });

  it('refuses an estimate that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => estimateOf(defineAgent({ ...research, estimate: () => bad }), {})).toThrow(RangeError);
  });
});

describe('agentTaskQueue', () => {
  it('hangs each agent off the base queue', () => {
    expect(agentTaskQueue('fairway', 'research')).toBe('fairway.agent.research');
  });
});

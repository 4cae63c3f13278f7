import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../../src/agent';
import { AGENT_NAMES, AGENTS } from '../../../src/agents/catalog';
import { agentNamed, registerAgents, registeredAgents } from '../../../src/workflows/agent-registry';

const echo = defineAgent({
  name: 'registry-test-echo',
  input: z.object({ text: z.string() }),
  estimate: 10,
  run: async (_ctx, input) => input.text,
});

describe('the workflow bundle agent registry', () => {
  it('holds the built-ins from the start', () => {
    for (const name of AGENT_NAMES) expect(agentNamed(name)).toBe(AGENTS[name]);
  });

  it('registers every agent a module exports, once, and nothing inherited', () => {
    registerAgents({ echo, other: 'not an agent' });
    registerAgents({ echo }); // the same definition again: no change
    expect(agentNamed('registry-test-echo')).toBe(echo);
    expect(registeredAgents().filter((a) => a.name === 'registry-test-echo')).toEqual([echo]);
    expect(agentNamed('constructor')).toBeUndefined();
    expect(agentNamed('toString')).toBeUndefined();
  });

  it('refuses a second definition of a registered name, the built-ins included', () => {
    const impostor = defineAgent({ ...echo, run: async () => 'other' });
    expect(() => registerAgents({ impostor })).toThrow(/Two agents are called "registry-test-echo"/);
    const synthetic = defineAgent({ ...echo, name: 'synthetic' });
    expect(() => registerAgents({ synthetic })).toThrow(/Two agents are called "synthetic"/);
    expect(agentNamed('synthetic')).toBe(AGENTS.synthetic);
  });
});

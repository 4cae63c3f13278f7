import { describe, expect, it } from 'vitest';
import { estimateOf } from '../../../src/agent';
import { synthetic } from '../../../src/agents/synthetic';
import { benchSynthetic } from '../../../bench/agents/synthetic';
import { agentsFlag, runVariants } from '../../../bench/lib/agent-variants';
import { renderTable } from '../../../bench/lib/report';
import type { BenchResult } from '../../../bench/lib/results';

describe("the benchmarks' user-code agent", () => {
  it("estimates every input as the built-in synthetic agent does, and parses the benchmarks' inputs alike", () => {
    const inputs = [
      { steps: 1, tokensPerStep: 10, stepMs: 1500 },
      { steps: 1, tokensPerStep: 100, effect: true },
      { steps: 4, tokensPerStep: 150, stepMs: 500 },
      { steps: 7, tokensPerStep: 31 },
      { steps: 3, tokensPerStep: 1 },
      { steps: 1000, tokensPerStep: 100_000 },
    ];
    for (const raw of inputs) {
      const own = benchSynthetic.input.parse(raw);
      const builtIn = synthetic.input.parse(raw);
      expect(own).toEqual(builtIn);
      expect(estimateOf(benchSynthetic, own)).toBe(estimateOf(synthetic, builtIn));
    }
  });
});

describe('--agents', () => {
  it('defaults to the built-in agent and takes the flag off the other arguments', () => {
    expect(agentsFlag(['--units', '5'])).toEqual({
      agents: 'built-in',
      variants: ['built-in'],
      rest: ['--units', '5'],
    });
    expect(agentsFlag(['--units', '5', '--agents', 'both'])).toEqual({
      agents: 'both',
      variants: ['built-in', 'user'],
      rest: ['--units', '5'],
    });
    expect(() => agentsFlag(['--agents', 'mine'])).toThrow('--agents takes built-in, user, both; got "mine"');
  });

  it("keeps the first variant's data and puts the user-code agent's beside it", async () => {
    const both = await runVariants(['built-in', 'user'], async (v) => ({ jain: v === 'user' ? 0.9 : 1 }));
    expect(both).toEqual({ jain: 1, agents: 'built-in', userAgents: { jain: 0.9, agents: 'user' } });
    expect(await runVariants(['user'], async () => ({ jain: 0.5 }))).toEqual({ jain: 0.5, agents: 'user' });
  });
});

describe('the figures table with both variants', () => {
  it("shows the built-in agent's figures, then the user-code agent's", () => {
    const flood = {
      pass: true,
      counters: { admitted: 1010 },
      seconds: 84,
      aAdmissionsWhileBWaited: 9,
      jain: 0.997,
    };
    const result: BenchResult = {
      scenario: 'flood',
      command: 'npm run bench -- flood --agents both',
      parameters: {},
      provenance: {
        commit: '0123456789abcdef',
        dirty: false,
        startedAt: '2026-12-02T06:00:00.000Z',
        finishedAt: '2026-12-02T06:05:00.000Z',
        durationSeconds: 300,
        machine: {
          cores: 2,
          cpu: 'x',
          memoryGiB: 8,
          platform: 'linux',
          loadAverage: { start: [1], end: [2] },
        },
        temporal: 'temporal version 1.9.1',
        node: 'v20',
      },
      data: { ...flood, agents: 'built-in', userAgents: { ...flood, jain: 0.9, agents: 'user' } },
    };
    const row = renderTable([result])
      .split('\n')
      .find((l) => l.startsWith('| Flood'))!;
    expect(row).toMatch(
      /built-in agent: PASS: 1,010 admitted in 84 s; A got 9 .*Jain's index 0\.997.*\*\*User-code agent:\*\* PASS: 1,010 admitted in 84 s; A got 9 .*Jain's index 0\.900/,
    );
  });
});

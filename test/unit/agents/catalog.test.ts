import { describe, expect, it } from 'vitest';
import { estimateTokens, STEP_PROMPT_ALLOWANCE } from '../../../src/agents/catalog';
import { stepWorstCase } from '../../../src/contract/model-call';
import { MAX_RUN_ID_LENGTH } from '../../../src/scheduler/limits';

describe('the synthetic agent estimate', () => {
  it('covers the worst case of every step, prompt included, at the longest run id and step number', () => {
    const longest = 'r'.repeat(MAX_RUN_ID_LENGTH);
    expect(stepWorstCase(longest, 1000, 1)).toBeLessThanOrEqual(STEP_PROMPT_ALLOWANCE);
    for (const tokensPerStep of [1, 10, 30, 31, 32, 100, 5000])
      for (const steps of [1, 7, 1000]) {
        let worst = 0;
        for (let step = 1; step <= steps; step++) worst += stepWorstCase(longest, step, tokensPerStep);
        expect(estimateTokens('synthetic', { steps, tokensPerStep })).toBeGreaterThanOrEqual(worst);
      }
  });

  it('is exactly steps × tokensPerStep when each step is larger than its prompt', () => {
    expect(estimateTokens('synthetic', { steps: 3, tokensPerStep: 100 })).toBe(300);
  });
});

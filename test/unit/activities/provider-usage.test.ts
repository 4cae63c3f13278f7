import { describe, expect, it } from 'vitest';
import { createModelClient } from '../../../src/activities/model-client';
import type { ModelCallSample } from '../../../src/activities/observations';
import { readUsage } from '../../../src/activities/provider/usage';
import { estimateTextTokens, stepPrompt } from '../../../src/contract/model-call';

/** A client whose provider answers 200 with `usageJson` as `usage.total_tokens`, written verbatim. */
function answering(usageJson: string) {
  const samples: ModelCallSample[] = [];
  const faults: object[] = [];
  const c = createModelClient({
    baseUrl: 'http://provider.test',
    model: 'm',
    onObservation: (s) => samples.push(s),
    log: { warn: (obj) => faults.push(obj) },
    fetchImpl: () =>
      Promise.resolve(
        new Response(`{"usage":{"total_tokens":${usageJson}}}`, {
          status: 200,
          headers: { 'content-type': 'application/json' },
        }),
      ),
  });
  return { c, samples, faults };
}

const req = { runId: 'run-a-00000000000000000000', step: 0, tokens: 500 };
/** Prompt plus max_tokens: the step's tokens, as the client sizes the call. */
const worst = Math.max(500, estimateTextTokens(stepPrompt(req.runId, 0)) + 1);

describe('provider usage is validated', () => {
  it('accepts a finite count within the worst case as it is', async () => {
    const { c, samples, faults } = answering('120');
    expect((await c.complete(req)).usedTokens).toBe(120);
    expect(samples[0]?.tokens).toBe(120);
    expect(faults).toEqual([]);
  });

  it.each([
    ['1e308', 'absurd'],
    ['1e400', 'Infinity once parsed'],
    ['-50', 'negative'],
    [String(worst + 1), 'above the worst case'],
  ])('charges the worst case for %s (%s) and logs a provider fault', async (json) => {
    const { c, samples, faults } = answering(json);
    expect((await c.complete(req)).usedTokens).toBe(worst);
    expect(samples[0]?.tokens).toBe(worst);
    expect(faults).toHaveLength(1);
  });

  it('readUsage bounds any value', () => {
    expect(readUsage(Number.NaN, 10)).toMatchObject({ tokens: 10 });
    expect(readUsage(3.2, 10)).toEqual({ tokens: 4, fault: null });
    expect(readUsage(10, 10)).toEqual({ tokens: 10, fault: null });
  });
});

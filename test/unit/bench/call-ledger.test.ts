import { describe, expect, it } from 'vitest';
import { modelWordsRequests, ModelWordsInputSchema } from '../../../bench/agents/model-words';
import { cutSurplus, requestWorstCase, worstCasesByKey } from '../../../bench/lib/call-ledger';

describe("the drills' account of cut calls", () => {
  it("reserves each model-words call by the tokenizer's count of its prompt: more words, more tokens", () => {
    const worst = (words: number) =>
      modelWordsRequests(ModelWordsInputSchema.parse({ words, calls: 2 })).map(requestWorstCase);
    const [a1, a2] = worst(20);
    const [b1] = worst(1000);
    expect(a2!).toBeGreaterThan(a1!);
    expect(b1! - a1!).toBeGreaterThan(900);
  });

  it('charges each cut call its worst case: the surplus is worst case − bill, NaN for a call it does not know', () => {
    const worstOf = worstCasesByKey(['r1', 'r2'], [[100, 200], [300]]);
    expect([...worstOf]).toEqual([
      ['r1:1', 100],
      ['r1:2', 200],
      ['r2:1', 300],
    ]);
    const cut = {
      calls: 2,
      tokens: 90,
      keys: [['r1:2', 50] as [string, number], ['r2:1', 40] as [string, number]],
    };
    expect(cutSurplus(cut, (k) => worstOf.get(k))).toBe(150 + 260);
    expect(cutSurplus(undefined, (k) => worstOf.get(k))).toBe(0);
    expect(cutSurplus({ ...cut, keys: [['r9:1', 5]] }, (k) => worstOf.get(k))).toBeNaN();
  });
});

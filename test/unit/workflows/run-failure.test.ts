import { describe, expect, it } from 'vitest';
import { failureOf } from '../../../src/workflows/run-failure';

describe("a run's failure as its view reports it", () => {
  it('never throws for what an agent threw, whatever it is', () => {
    const throwingMessage = new Error('x');
    Object.defineProperty(throwingMessage, 'message', {
      get() {
        throw new Error('no');
      },
    });
    const throwingString = {
      toString() {
        throw new Error('no');
      },
    };
    for (const thrown of [Object.create(null), throwingMessage, throwingString])
      expect(failureOf(thrown)).toEqual({
        code: 'error',
        message: 'the agent threw a value that cannot be shown as text',
        usedTokens: 0,
      });
    expect(failureOf('plain')).toEqual({ code: 'error', message: 'plain', usedTokens: 0 });
    expect(failureOf(new Error('boom'))).toEqual({ code: 'error', message: 'boom', usedTokens: 0 });
  });
});

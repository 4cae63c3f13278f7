import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_TOKEN_FACTOR,
  countPromptTokens,
  countTextTokens,
  worstCaseTokens,
} from '../../../src/activities/provider/tokenizer';
import type { ModelRequest } from '../../../src/contract/chat-model';

const ask = (content: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content },
  ],
  maxTokens: 100,
  ...extra,
});

describe('the tokenizer behind the reservation', () => {
  it('counts real tokens, not four characters a token', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('hello world')).toBe(2);
    // About 4,000 characters of common words: about two tokens every twelve characters, not 1,000.
    const n = countTextTokens('hello world '.repeat(333));
    expect(n).toBeGreaterThan(600);
    expect(n).toBeLessThan(700);
  });

  it('grows with the prompt, the messages and the tools', () => {
    const short = countPromptTokens(ask('Summarise the report.'));
    const long = countPromptTokens(ask('Summarise the report. '.repeat(50)));
    expect(long).toBeGreaterThan(short + 200);
    const more = countPromptTokens({
      messages: [...ask('Summarise the report.').messages, { role: 'assistant', content: 'Done.' }],
    });
    expect(more).toBeGreaterThan(short);
    const tool = { name: 'search', description: 'Searches.', parameters: { type: 'object' } };
    expect(countPromptTokens({ ...ask('Summarise the report.'), tools: [tool] })).toBeGreaterThan(short + 8);
  });

  it('reserves the prompt plus maxTokens, with the Anthropic margin on the prompt', () => {
    const req = ask('What is the capital of France? '.repeat(20));
    const prompt = countPromptTokens(req);
    expect(worstCaseTokens(req, 'openai')).toBe(prompt + 100);
    expect(worstCaseTokens(req, 'anthropic')).toBe(Math.ceil(prompt * ANTHROPIC_TOKEN_FACTOR) + 100);
    const withTools = { ...req, tools: [{ name: 't', parameters: {} }] };
    expect(worstCaseTokens(withTools, 'anthropic')).toBeGreaterThan(worstCaseTokens(req, 'anthropic') + 300);
  });
});

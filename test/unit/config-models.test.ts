import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';

describe('MODELS: the models agents call', () => {
  it('defaults to both dialects on the embedded simulator', () => {
    const c = loadConfig({});
    expect(c.models.default).toBe('sim-gpt');
    expect(c.models.endpoints).toEqual([
      { name: 'sim-gpt', dialect: 'openai', baseUrl: undefined, apiKey: undefined, providerModel: undefined },
      {
        name: 'sim-claude',
        dialect: 'anthropic',
        baseUrl: undefined,
        apiKey: undefined,
        providerModel: undefined,
      },
    ]);
    expect(c.claimCheckBytes).toBe(128 * 1024);
  });

  it('reads a key from the variable apiKeyEnv names, and the provider model name', () => {
    const c = loadConfig({
      MODELS: JSON.stringify({
        claude: {
          dialect: 'anthropic',
          baseUrl: 'https://api.anthropic.com',
          apiKeyEnv: 'ANTHROPIC_KEY',
          model: 'claude-x',
        },
      }),
      MODEL_DEFAULT: 'claude',
      ANTHROPIC_KEY: 'sk-test',
    });
    expect(c.models.endpoints).toEqual([
      {
        name: 'claude',
        dialect: 'anthropic',
        baseUrl: 'https://api.anthropic.com',
        apiKey: 'sk-test',
        providerModel: 'claude-x',
      },
    ]);
  });

  it.each([
    [{ MODELS: 'not json' }, /MODELS: must be a JSON object/],
    [{ MODELS: '{"m":{"dialect":"grpc"}}', MODEL_DEFAULT: 'm' }, /MODELS/],
    [{ MODEL_DEFAULT: 'gpt-9' }, /MODEL_DEFAULT: "gpt-9" is not one of MODELS/],
    [
      { MODELS: '{"m":{"dialect":"openai","apiKeyEnv":"UNSET_KEY"}}', MODEL_DEFAULT: 'm' },
      /UNSET_KEY is not set/,
    ],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

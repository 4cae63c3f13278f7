import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { agentPool, checkAgentModels } from '../../src/fleet/model-pools';

describe('MODELS: the models agents call', () => {
  it('defaults to both dialects on the embedded simulator', () => {
    const c = loadConfig({});
    expect(c.models.default).toBe('sim-gpt');
    expect(c.models.endpoints).toEqual([
      {
        name: 'sim-gpt',
        dialect: 'openai',
        baseUrl: undefined,
        apiKey: undefined,
        providerModel: undefined,
        pool: undefined,
      },
      {
        name: 'sim-claude',
        dialect: 'anthropic',
        baseUrl: undefined,
        apiKey: undefined,
        providerModel: undefined,
        pool: undefined,
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
        pool: undefined,
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
    [
      { MODELS: '{"m":{"dialect":"openai","pool":"no spaces"}}', MODEL_DEFAULT: 'm' },
      /MODELS.m.pool: a pool name/,
    ],
    [
      { MODELS: '{"m":{"dialect":"openai"},"x":{"dialect":"openai","quotaShare":0.5}}', MODEL_DEFAULT: 'm' },
      /MODELS.x.quotaShare: only a model in a named pool has its own share/,
    ],
    [
      {
        MODELS: JSON.stringify({
          m: { dialect: 'openai' },
          x: { dialect: 'openai', pool: 'p', quotaShare: 0.5 },
          y: { dialect: 'openai', pool: 'p', quotaShare: 0.6 },
        }),
        MODEL_DEFAULT: 'm',
      },
      /MODELS.x.quotaShare: 0.5 differs from MODELS.y.quotaShare \(0.6\) in pool "p"/,
    ],
    [
      { MODELS: '{"m":{"dialect":"openai","pool":"gpt"}}', MODEL_DEFAULT: 'm' },
      /MODELS.m.pool: MODEL_DEFAULT's calls are paced in the default pool/,
    ],
    [
      {
        MODELS: JSON.stringify({
          m: { dialect: 'openai' },
          ...Object.fromEntries(
            Array.from({ length: 9 }, (_, i) => [`p${i}`, { dialect: 'openai', pool: `p${i}` }]),
          ),
        }),
        MODEL_DEFAULT: 'm',
      },
      /9 pools are named; one scheduler paces at most 8/,
    ],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe("model pools: which pool admits an agent's runs", () => {
  const config = loadConfig({
    MODELS: JSON.stringify({
      'sim-gpt': { dialect: 'openai' },
      fast: { dialect: 'openai', pool: 'fast' },
      other: { dialect: 'anthropic' },
    }),
  });
  it("gives a pool the quota share its models state; the others MODEL_QUOTA_SHARE's", () => {
    const c = loadConfig({
      MODEL_QUOTA_SHARE: '0.9',
      MODELS: JSON.stringify({
        'sim-gpt': { dialect: 'openai' },
        a: { dialect: 'openai', pool: 'fast', quotaShare: 0.4 },
        b: { dialect: 'openai', pool: 'fast' },
        c: { dialect: 'openai', pool: 'slow' },
      }),
    });
    expect(c.governor.quotaShare).toBe(0.9);
    expect(c.governor.poolQuotaShares).toEqual({ fast: 0.4 });
    expect(config.governor.poolQuotaShares).toBeUndefined();
  });

  it('is the pool of the model the agent declares; the default pool without one', () => {
    expect(config.models.endpoints.find((e) => e.name === 'fast')?.pool).toBe('fast');
    expect(agentPool(config.models, { model: 'fast' })).toBe('fast');
    expect(agentPool(config.models, { model: 'other' })).toBeUndefined();
    expect(agentPool(config.models, {})).toBeUndefined();
    expect(agentPool(config.models, undefined)).toBeUndefined();
  });
  it('an agent declaring a model not in MODELS stops the start with its name', () => {
    expect(() =>
      checkAgentModels(config.models, [{ name: 'a', model: 'fast' }, { name: 'b' }]),
    ).not.toThrow();
    expect(() => checkAgentModels(config.models, [{ name: 'writer', model: 'gpt-9' }])).toThrow(
      /Agent "writer" declares model "gpt-9", which is not one of MODELS \(sim-gpt, fast, other\)/,
    );
  });
});

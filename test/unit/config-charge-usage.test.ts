import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';

/** Issue 44, item 5: the one usage lookup sees only the calls sent to the one model base URL. */

const MIXED = JSON.stringify({
  gpt: { dialect: 'openai' },
  claude: { dialect: 'anthropic', baseUrl: 'https://api.anthropic.com' },
});

describe('CHARGE_USAGE_LOOKUP=openai-stored: a configuration the ledger cannot reconcile is refused', () => {
  it('refuses a model served at a base URL of its own, naming it', () => {
    const load = () =>
      loadConfig({
        MODELS: MIXED,
        MODEL_DEFAULT: 'gpt',
        MODEL_BASE_URL: 'https://api.openai.com/v1',
        CHARGE_USAGE_LOOKUP: 'openai-stored',
      });
    expect(load).toThrow(/MODELS\.claude\.baseUrl: .*CHARGE_USAGE_LOOKUP=openai-stored/);
  });

  it('refuses it with CHARGE_USAGE_URL set too, and with the embedded simulator as the base', () => {
    expect(() =>
      loadConfig({
        MODELS: MIXED,
        MODEL_DEFAULT: 'gpt',
        MODEL_BASE_URL: 'https://api.openai.com',
        CHARGE_USAGE_URL: 'https://api.openai.com',
        CHARGE_USAGE_LOOKUP: 'openai-stored',
      }),
    ).toThrow(/MODELS\.claude\.baseUrl/);
    expect(() =>
      loadConfig({ MODELS: MIXED, MODEL_DEFAULT: 'gpt', CHARGE_USAGE_LOOKUP: 'openai-stored' }),
    ).toThrow(/MODELS\.claude\.baseUrl/);
  });

  it('takes models served at MODEL_BASE_URL, however its URL is spelt', () => {
    const c = loadConfig({
      MODELS: JSON.stringify({
        a: { dialect: 'openai' },
        b: { dialect: 'openai', baseUrl: 'https://api.openai.com/' },
      }),
      MODEL_DEFAULT: 'a',
      MODEL_BASE_URL: 'https://api.openai.com/v1',
      CHARGE_USAGE_LOOKUP: 'openai-stored',
    });
    expect(c.charges.usageLookup).toBe('openai-stored');
    expect(loadConfig({ CHARGE_USAGE_LOOKUP: 'openai-stored' }).charges.usageLookup).toBe('openai-stored');
  });

  it('a mixed setup without a lookup (none, or auto) keeps every worst case, and starts', () => {
    for (const lookup of ['none', 'auto'])
      expect(
        loadConfig({
          MODELS: MIXED,
          MODEL_DEFAULT: 'gpt',
          MODEL_BASE_URL: 'https://api.openai.com/v1',
          CHARGE_USAGE_LOOKUP: lookup,
        }).charges.usageLookup,
      ).toBe('none');
  });
});

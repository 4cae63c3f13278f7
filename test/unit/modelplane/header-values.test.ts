import { describe, expect, it } from 'vitest';
import {
  parseCount,
  parseHttpDate,
  parseRetryAfter,
  parseRfc3339,
} from '../../../src/activities/provider/header-values';
import {
  anthropicRateLimitHeaders,
  parseRateLimitHeaders,
} from '../../../src/activities/provider/rate-limit-headers';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);

describe('strict header values', () => {
  it('reads Retry-After as delta-seconds or an HTTP-date in any of its three forms', () => {
    expect(parseRetryAfter('86400', NOW)).toBe(86_400_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Monday, 30-Nov-26 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Mon Nov 30 12:00:30 2026', NOW)).toBe(30_000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 11:00:00 GMT', NOW)).toBe(0); // already past
  });

  it.each([
    'soon',
    '-5',
    '1.5',
    '1e3',
    '0x10',
    '',
    ' ',
    'Infinity',
    'NaN',
    '30 seconds',
    '2026-11-30T12:00:30Z', // RFC 3339 is not an HTTP-date
    'Mon, 31 Feb 2026 12:00:00 GMT', // no such day
    'Mon, 30 Nov 2026 25:00:00 GMT',
    'Mon, 30 Nov 2026 12:00:30 PST',
    'Tuesday, 30 Nov 2026', // Date.parse would accept this
    '12345678901234567890',
  ])('ignores a garbled Retry-After %j', (v) => {
    expect(parseRetryAfter(v, NOW)).toBeUndefined();
  });

  it('reads counts as digits only', () => {
    expect(parseCount('120000')).toBe(120_000);
    for (const v of ['-1', '1.5', '1e5', ' ', 'abc', '0x1f']) expect(parseCount(v)).toBeUndefined();
  });

  it('reads RFC 3339 instants, refusing other forms', () => {
    expect(parseRfc3339('2026-11-30T12:00:05Z')).toBe(NOW + 5000);
    expect(parseRfc3339('2026-11-30T13:00:05+01:00')).toBe(NOW + 5000);
    expect(parseRfc3339('2026-11-30T12:00:05.250Z')).toBe(NOW + 5250);
    for (const v of ['2026-11-30', 'Mon, 30 Nov 2026 12:00:05 GMT', '2026-02-30T00:00:00Z', 'tomorrow', '5'])
      expect(parseRfc3339(v)).toBeUndefined();
    expect(parseHttpDate('2026-11-30T12:00:05Z')).toBeUndefined();
  });
});

describe('rate-limit header dialects', () => {
  it('ignores garbled OpenAI values instead of guessing', () => {
    const h = new Headers({
      'x-ratelimit-limit-tokens': '1e9',
      'x-ratelimit-remaining-tokens': '-3',
      'x-ratelimit-reset-tokens': 'a while',
      'retry-after': 'later',
      'retry-after-ms': 'NaN',
    });
    expect(parseRateLimitHeaders(h, NOW)).toEqual({});
  });

  it('reads Anthropic headers: RFC 3339 resets from the call time, input and output buckets as total tokens', () => {
    const headers = new Headers(
      anthropicRateLimitHeaders(
        {
          requests: { limit: 50, remaining: 49, resetMs: 1200 },
          tokens: { limit: 100_000, remaining: 90_000, resetMs: 6000 },
          inputTokens: { limit: 20_000, remaining: 1000, resetMs: 57_000 },
          outputTokens: { limit: 80_000, remaining: 60_000, resetMs: 15_000 },
        },
        NOW,
      ),
    );
    expect(headers.get('anthropic-ratelimit-input-tokens-reset')).toBe('2026-11-30T12:00:57Z');
    // A call of 1 input token for 3 output tokens: the input bucket admits 80k total tokens a minute
    // of such calls, the output bucket 106,666, the combined one 100k: the input bucket binds.
    const split = { input: 1, output: 3 };
    expect(parseRateLimitHeaders(headers, NOW, split)).toEqual({
      limitTokens: 80_000,
      remainingTokens: 4000,
      resetTokensMs: 57_000,
      limitRequests: 50,
      remainingRequests: 49,
      resetRequestsMs: 2000, // whole seconds, rounded up
    });
    // Measured from the call's own time: read a second later, the reset is a second nearer.
    expect(parseRateLimitHeaders(headers, NOW + 1000, split).resetTokensMs).toBe(56_000);
  });

  it('ignores an unparseable Anthropic reset and keeps the rest', () => {
    const h = new Headers({
      'anthropic-ratelimit-tokens-limit': '1000',
      'anthropic-ratelimit-tokens-remaining': '10',
      'anthropic-ratelimit-tokens-reset': 'in a day',
      'retry-after': '86400',
    });
    expect(parseRateLimitHeaders(h, NOW)).toEqual({
      limitTokens: 1000,
      remainingTokens: 10,
      retryAfterMs: 86_400_000,
    });
  });
});

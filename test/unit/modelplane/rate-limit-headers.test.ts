import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../../src/activities/provider/header-values';
import {
  formatDuration,
  parseRateLimitHeaders,
  rateLimitHeaders,
} from '../../../src/activities/provider/rate-limit-headers';

describe('rate-limit durations', () => {
  it.each([
    [20, '20ms'],
    [0, '0ms'],
    [999.2, '1s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [60_000, '1m0s'],
    [360_000, '6m0s'],
    [3_723_000, '1h2m3s'],
  ])('formats %d ms as %s and reads it back', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(Math.ceil(ms));
  });

  it('reads provider forms and refuses garbage', () => {
    expect(parseDuration('1.2s')).toBeCloseTo(1200);
    expect(parseDuration('6m0s')).toBe(360_000);
    expect(parseDuration('2')).toBe(2000);
    expect(parseDuration('500us')).toBeCloseTo(0.5);
    expect(parseDuration('soon')).toBeUndefined();
    expect(parseDuration('5s later')).toBeUndefined();
    expect(parseDuration(null)).toBeUndefined();
  });
});

describe('rate-limit headers', () => {
  it('round-trips a snapshot and prefers retry-after-ms', () => {
    const headers = new Headers(
      rateLimitHeaders({
        limitTokens: 1000,
        remainingTokens: 250,
        resetTokensMs: 45_000,
        limitRequests: 60,
        remainingRequests: 59,
        resetRequestsMs: 1000,
      }),
    );
    headers.set('retry-after', '3');
    headers.set('retry-after-ms', '2500');
    expect(parseRateLimitHeaders(headers)).toEqual({
      limitTokens: 1000,
      remainingTokens: 250,
      resetTokensMs: 45_000,
      limitRequests: 60,
      remainingRequests: 59,
      resetRequestsMs: 1000,
      retryAfterMs: 2500,
    });
  });

  it('reads retry-after as seconds or as an HTTP date, and leaves absent headers out', () => {
    expect(parseRateLimitHeaders(new Headers({ 'retry-after': '7' }))).toEqual({ retryAfterMs: 7000 });
    const now = Date.parse('2025-01-01T00:00:00Z');
    const date = new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' });
    expect(parseRateLimitHeaders(date, now)).toEqual({ retryAfterMs: 30_000 });
    expect(parseRateLimitHeaders(new Headers())).toEqual({});
  });
});

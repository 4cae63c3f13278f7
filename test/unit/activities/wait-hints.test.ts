import { describe, expect, it } from 'vitest';
import { ABSURD_WAIT_MS, parseReset, readWaitHint } from '../../../src/activities/provider/wait-hints';
import type { UnknownFormat } from '../../../src/activities/provider/wait-hints';
import { reportUnknownFormat } from '../../../src/activities/provider/unknown-formats';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const read = (headers: Record<string, string>, body = '') => {
  const unknown: UnknownFormat[] = [];
  const hint = readWaitHint(new Headers(headers), body, NOW, (f) => unknown.push(f));
  return { hint, unknown };
};

describe('the wait a 429 states', () => {
  it.each<[string, Record<string, string>, string, number | undefined, string | undefined]>([
    ['retry-after-ms first', { 'retry-after-ms': '1500', 'retry-after': '9' }, '', 1500, 'retry-after-ms'],
    ['Azure ms', { 'x-ms-retry-after-ms': '250', 'retry-after': '9' }, '', 250, 'x-ms-retry-after-ms'],
    ['retry-after seconds', { 'retry-after': '7' }, 'try again in 1s', 7000, 'retry-after'],
    ['retry-after HTTP-date', { 'retry-after': 'Wed, 02 Dec 2026 12:00:13 GMT' }, '', 13_000, 'retry-after'],
    ['retry-after decimal', { 'retry-after': '1.5' }, '', 1500, 'retry-after'],
    ['LiteLLM vendor header', { 'llm_provider-retry-after': '60' }, '', 60_000, 'llm_provider-retry-after'],
    [
      'vendor ms before vendor s',
      { 'foo-retry-after': '9', 'bar-retry-after-ms': '40' },
      '',
      40,
      'bar-retry-after-ms',
    ],
    [
      'standard before vendor',
      { 'retry-after': '2', 'llm_provider-retry-after': '60' },
      '',
      2000,
      'retry-after',
    ],
    [
      'body 1.2s',
      {},
      '{"error":{"message":"Rate limit reached. Please try again in 1.2s. Visit"}}',
      1200,
      'body',
    ],
    ['body 20ms', {}, 'try again in 20ms.', 20, 'body'],
    ['body 6 seconds', {}, 'Please retry after 6 seconds', 6000, 'body'],
    ['body 6m0s', {}, 'Limit hit; retry in 6m0s', 360_000, 'body'],
    ['body 2 minutes', {}, 'Try again in 2 minutes.', 120_000, 'body'],
    ['body before resets', { 'x-ratelimit-reset-tokens': '6m0s' }, 'try again in 3s', 3000, 'body'],
    [
      'soonest reset, Go durations',
      { 'x-ratelimit-reset-tokens': '6m0s', 'x-ratelimit-reset-requests': '1.2s' },
      'Rate limit reached.',
      1200,
      'x-ratelimit-reset-requests',
    ],
    [
      'Anthropic RFC 3339 resets',
      {
        'anthropic-ratelimit-tokens-reset': '2026-12-02T12:00:30Z',
        'anthropic-ratelimit-requests-reset': '2026-12-02T12:00:05Z',
      },
      '',
      5000,
      'anthropic-ratelimit-requests-reset',
    ],
    [
      'epoch seconds reset',
      { 'x-ratelimit-reset': String(NOW / 1000 + 13) },
      '',
      13_000,
      'x-ratelimit-reset',
    ],
    ['bare seconds reset', { 'ratelimit-reset': '13' }, '', 13_000, 'ratelimit-reset'],
    [
      'full buckets are not the cause',
      { 'x-ratelimit-reset-tokens': '0ms', 'x-ratelimit-reset-requests': '2s' },
      '',
      2000,
      'x-ratelimit-reset-requests',
    ],
    ['nothing stated', { 'x-ratelimit-remaining-tokens': '0' }, 'Rate limit reached.', undefined, undefined],
    ['negative ignored', { 'retry-after': '-5' }, '', undefined, undefined],
    [
      'absurd ignored, next signal used',
      { 'retry-after-ms': String(ABSURD_WAIT_MS + 1), 'retry-after': '3' },
      '',
      3000,
      'retry-after',
    ],
    ['past epoch reset is no wait', { 'x-ratelimit-reset': '1000000000' }, '', undefined, undefined],
  ])('%s', (_name, headers, body, waitMs, from) => {
    const { hint } = read(headers, body);
    if (waitMs === undefined) expect(hint).toBeUndefined();
    else {
      expect(hint?.waitMs).toBeCloseTo(waitMs);
      expect(hint?.from).toBe(from);
    }
  });

  it('reports unreadable values of the headers it knows, and reads on past them', () => {
    const { hint, unknown } = read(
      {
        'retry-after': 'soon',
        'llm_provider-retry-after': 'later',
        'x-ratelimit-reset-tokens': 'in a while',
      },
      'try again in 4s',
    );
    expect(hint).toEqual({ waitMs: 4000, from: 'body' });
    expect(unknown).toEqual([
      { header: 'retry-after', value: 'soon' },
      { header: 'llm_provider-retry-after', value: 'later' },
    ]);
    expect(read({ 'x-ratelimit-reset-tokens': 'in a while' }).unknown).toEqual([
      { header: 'x-ratelimit-reset-tokens', value: 'in a while' },
    ]);
  });

  it('reads every reset format', () => {
    expect(parseReset('6m0s', NOW)).toBe(360_000);
    expect(parseReset('20ms', NOW)).toBe(20);
    expect(parseReset('2', NOW)).toBe(2000);
    expect(parseReset(String(NOW + 500), NOW)).toBe(500);
    expect(parseReset('2026-12-02T12:00:01.5+00:00', NOW)).toBe(1500);
    expect(parseReset('Wed, 02 Dec 2026 12:01:00 GMT', NOW)).toBe(60_000);
    expect(parseReset('2026-12-02T11:00:00Z', NOW)).toBe(0);
    expect(parseReset('tomorrow', NOW)).toBeUndefined();
  });
});

describe('unknown formats', () => {
  it('are logged once per header and format, not per call', () => {
    const warned: object[] = [];
    const log = { warn: (obj: object) => warned.push(obj) };
    for (const value of ['soon', 'soon', 'in 5', 'in 6'])
      reportUnknownFormat(log, { header: 'x-test-once-retry-after', value });
    expect(warned).toEqual([
      { header: 'x-test-once-retry-after', value: 'soon' },
      { header: 'x-test-once-retry-after', value: 'in 5' },
    ]);
  });
});

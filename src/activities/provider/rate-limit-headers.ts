import { parseCount, parseDuration, parseRfc3339 } from './header-values';
import { headerWait } from './wait-hints';

/**
 * The model plane's rate-limit header protocol (OpenAI and Anthropic dialects), both directions:
 * the simulator formats it, the model client parses it, so the two cannot drift.
 */

/** The quota picture of one call, as `x-ratelimit-*` headers carry it. */
export interface RateLimitSnapshot {
  limitTokens: number;
  remainingTokens: number;
  resetTokensMs: number;
  limitRequests: number;
  remainingRequests: number;
  resetRequestsMs: number;
}

/** Formats ms like Go's `time.Duration`, as providers do: "20ms", "1.5s", "6m0s", "1h2m3s". */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = Number(((whole % 60_000) / 1000).toFixed(3));
  const h = hours > 0 ? `${hours}h` : '';
  const m = hours > 0 || minutes > 0 ? `${minutes}m` : '';
  return `${h}${m}${seconds}s`;
}

/** The `x-ratelimit-*` headers for a snapshot. */
export function rateLimitHeaders(r: RateLimitSnapshot): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(r.limitTokens),
    'x-ratelimit-remaining-tokens': String(r.remainingTokens),
    'x-ratelimit-reset-tokens': formatDuration(r.resetTokensMs),
    'x-ratelimit-limit-requests': String(r.limitRequests),
    'x-ratelimit-remaining-requests': String(r.remainingRequests),
    'x-ratelimit-reset-requests': formatDuration(r.resetRequestsMs),
  };
}

/** What a client can read from a response's rate-limit headers; absent or garbled headers stay undefined. */
export interface ParsedRateLimit {
  /** Token quota per minute, in total tokens (see `parseRateLimitHeaders` for separate input/output buckets). */
  limitTokens?: number;
  remainingTokens?: number;
  /** Ms until the token bucket is full again (both dialects mean "full", not "enough for this call"). */
  resetTokensMs?: number;
  limitRequests?: number;
  remainingRequests?: number;
  resetRequestsMs?: number;
  /**
   * The provider's requested wait: `retry-after-ms`, else `retry-after` (delta-seconds or an
   * HTTP-date). A rate-limit 429 is read for every wait signal instead (`readWaitHint`).
   */
  retryAfterMs?: number;
}

/** The call's split between prompt (input) and completion (output) tokens; both ≥ 0. */
export interface TokenSplit {
  input: number;
  output: number;
}

/**
 * Reads rate-limit and retry headers of either dialect, strictly: OpenAI's `x-ratelimit-*`, or
 * Anthropic's `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`
 * (reset an RFC 3339 instant). `now` is the call's own time: it resolves HTTP-dates and instants.
 *
 * Separate input and output token buckets are folded into one total-token view with the call's
 * split: a bucket of L input tokens admits L / inputShare total tokens of calls shaped like this
 * one, so the binding bucket is the smallest such figure (and the same for `remaining`).
 */
export function parseRateLimitHeaders(
  headers: Headers,
  now: number = Date.now(),
  split: TokenSplit = { input: 1, output: 1 },
): ParsedRateLimit {
  const out: ParsedRateLimit = hasAnthropic(headers)
    ? parseAnthropic(headers, now, split)
    : {
        limitTokens: parseCount(headers.get('x-ratelimit-limit-tokens')),
        remainingTokens: parseCount(headers.get('x-ratelimit-remaining-tokens')),
        resetTokensMs: parseDuration(headers.get('x-ratelimit-reset-tokens')),
        limitRequests: parseCount(headers.get('x-ratelimit-limit-requests')),
        remainingRequests: parseCount(headers.get('x-ratelimit-remaining-requests')),
        resetRequestsMs: parseDuration(headers.get('x-ratelimit-reset-requests')),
      };
  out.retryAfterMs = headerWait(headers, now)?.waitMs;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as ParsedRateLimit;
}

const A = 'anthropic-ratelimit-';

function hasAnthropic(headers: Headers): boolean {
  for (const [name] of headers) if (name.startsWith(A)) return true;
  return false;
}

interface Bucket {
  limit?: number | undefined;
  remaining?: number | undefined;
  resetMs?: number | undefined;
}

function anthropicBucket(headers: Headers, kind: string, now: number): Bucket {
  const at = parseRfc3339(headers.get(`${A}${kind}-reset`));
  return {
    limit: parseCount(headers.get(`${A}${kind}-limit`)),
    remaining: parseCount(headers.get(`${A}${kind}-remaining`)),
    resetMs: at === undefined ? undefined : Math.max(0, at - now),
  };
}

function parseAnthropic(headers: Headers, now: number, split: TokenSplit): ParsedRateLimit {
  const requests = anthropicBucket(headers, 'requests', now);
  const total = Math.max(0, split.input) + Math.max(0, split.output);
  const shares =
    total > 0 ? { input: split.input / total, output: split.output / total } : { input: 1, output: 1 };
  // Each bucket as total tokens: the combined one as it is, input and output scaled by the call's split.
  const buckets: { b: Bucket; share: number }[] = [
    { b: anthropicBucket(headers, 'tokens', now), share: 1 },
    { b: anthropicBucket(headers, 'input-tokens', now), share: shares.input },
    { b: anthropicBucket(headers, 'output-tokens', now), share: shares.output },
  ];
  const scaled = (v: number | undefined, share: number) =>
    v === undefined || !(share > 0) ? undefined : Math.floor(v / share);
  const min = (xs: (number | undefined)[]) => {
    const known = xs.filter((x): x is number => x !== undefined);
    return known.length ? Math.min(...known) : undefined;
  };
  const max = (xs: (number | undefined)[]) => {
    const known = xs.filter((x): x is number => x !== undefined);
    return known.length ? Math.max(...known) : undefined;
  };
  return {
    limitTokens: min(buckets.map(({ b, share }) => scaled(b.limit, share))),
    remainingTokens: min(buckets.map(({ b, share }) => scaled(b.remaining, share))),
    resetTokensMs: max(buckets.map(({ b }) => b.resetMs)),
    limitRequests: requests.limit,
    remainingRequests: requests.remaining,
    resetRequestsMs: requests.resetMs,
  };
}

/** The quota picture of one call in Anthropic's dialect (input and output buckets may differ). */
export interface AnthropicSnapshot {
  requests: { limit: number; remaining: number; resetMs: number };
  tokens: { limit: number; remaining: number; resetMs: number };
  inputTokens: { limit: number; remaining: number; resetMs: number };
  outputTokens: { limit: number; remaining: number; resetMs: number };
}

/** The `anthropic-ratelimit-*` headers for a snapshot taken at `now` (resets as RFC 3339 instants). */
export function anthropicRateLimitHeaders(r: AnthropicSnapshot, now: number): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (kind: string, b: { limit: number; remaining: number; resetMs: number }) => {
    out[`${A}${kind}-limit`] = String(b.limit);
    out[`${A}${kind}-remaining`] = String(Math.max(0, Math.floor(b.remaining)));
    out[`${A}${kind}-reset`] = new Date(now + Math.ceil(Math.max(0, b.resetMs) / 1000) * 1000)
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
  };
  put('requests', r.requests);
  put('tokens', r.tokens);
  put('input-tokens', r.inputTokens);
  put('output-tokens', r.outputTokens);
  return out;
}

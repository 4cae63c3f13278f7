/**
 * The model plane's rate-limit header protocol (OpenAI style), both directions:
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

const UNIT_MS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 1e-6,
};

/** Parses "6m0s", "1.2s", "20ms" (or bare seconds, "2") into ms; undefined when unreadable. */
export function parseDuration(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const s = text.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const parts = [...s.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2] ?? ''] ?? 0), 0);
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

/** What a client can read from a response's rate-limit headers; absent headers stay undefined. */
export interface ParsedRateLimit {
  limitTokens?: number;
  remainingTokens?: number;
  resetTokensMs?: number;
  limitRequests?: number;
  remainingRequests?: number;
  resetRequestsMs?: number;
  /** The provider's requested wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date). */
  retryAfterMs?: number;
}

/** Reads rate-limit and retry headers; `now` resolves an HTTP-date `retry-after`. */
export function parseRateLimitHeaders(headers: Headers, now: number = Date.now()): ParsedRateLimit {
  const num = (name: string): number | undefined => {
    const v = headers.get(name);
    const n = v === null || v.trim() === '' ? NaN : Number(v);
    return Number.isFinite(n) ? n : undefined;
  };
  const out: ParsedRateLimit = {
    limitTokens: num('x-ratelimit-limit-tokens'),
    remainingTokens: num('x-ratelimit-remaining-tokens'),
    resetTokensMs: parseDuration(headers.get('x-ratelimit-reset-tokens')),
    limitRequests: num('x-ratelimit-limit-requests'),
    remainingRequests: num('x-ratelimit-remaining-requests'),
    resetRequestsMs: parseDuration(headers.get('x-ratelimit-reset-requests')),
    retryAfterMs: num('retry-after-ms') ?? retryAfterToMs(headers.get('retry-after'), now),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as ParsedRateLimit;
}

function retryAfterToMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

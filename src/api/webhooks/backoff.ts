import type { RetryPolicy } from '../../config';

/**
 * The wait (ms) after failed attempt `n` (1-based): `baseMs · 2^(n-1)`, at most `maxMs`; a longer
 * Retry-After the receiver sent (seconds) wins, up to `maxMs` too. Null when no attempt is left.
 */
export function retryDelayMs(n: number, policy: RetryPolicy, retryAfterSeconds?: number): number | null {
  if (n >= policy.maxAttempts) return null;
  const backoff = policy.baseMs * 2 ** Math.min(n - 1, 40);
  const asked = retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : 0;
  return Math.min(policy.maxMs, Math.max(backoff, asked));
}

/** The whole schedule: the wait before each retry, in order (for the docs and the tests). */
export function retrySchedule(policy: RetryPolicy): number[] {
  const out: number[] = [];
  for (let n = 1; ; n++) {
    const d = retryDelayMs(n, policy);
    if (d === null) return out;
    out.push(d);
  }
}

/** A Retry-After header's seconds (a number or an HTTP date), or undefined. */
export function retryAfterOf(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (Number.isFinite(s)) return s >= 0 ? s : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

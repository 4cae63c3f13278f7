/**
 * When a refused (or failed) event dispatch is tried again: never before the fleet's Retry-After,
 * otherwise exponential from 2 s, capped at 5 minutes; after MAX_DISPATCH_ATTEMPTS the event settles
 * with its refusal kept, and only a replay tries again.
 */
export const MAX_DISPATCH_ATTEMPTS = 10;
const BASE_MS = 2_000;
const CAP_MS = 5 * 60_000;

export function retryDelayMs(attempts: number, retryAfterSeconds: number): number {
  const exponential = Math.min(CAP_MS, BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.max(exponential, Math.ceil(retryAfterSeconds) * 1000);
}

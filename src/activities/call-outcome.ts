import { ApplicationFailure } from '@temporalio/common';

/**
 * The provider answered a call with an error (a 5xx): it served, and so billed, nothing. Plain
 * `Error` otherwise (retried like any transient fault).
 */
export class ProviderErrorAnswer extends Error {
  override name = 'ProviderErrorAnswer';
}

/**
 * The client gave up on a call before the activity's start-to-close timeout (`clientTimeoutMs`): the
 * provider may still have served it, so its outcome is unknown. Plain `Error`: retried.
 */
export class ModelCallTimedOut extends Error {
  override name = 'ModelCallTimedOut';
}

/**
 * Whether a model call that threw was certainly not billed: the provider answered it with an error
 * (a 429, a 4xx, a 5xx) or it never reached the provider (connection refused). Anything else (a
 * connection cut mid-call, an aborted call, a 2xx without usage) may have been billed: its outcome
 * is unknown, and it is charged its worst case.
 */
export function certainlyUnbilled(err: unknown): boolean {
  if (err instanceof ApplicationFailure || err instanceof ProviderErrorAnswer) return true;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if ((e as { code?: unknown }).code === 'ECONNREFUSED') return true;
  return false;
}

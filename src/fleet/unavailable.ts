import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { NamespaceNotFoundError } from '@temporalio/common';
import { ApiError } from '../contract/errors';
import { isPgUnavailable } from '../stores/engine/pg';
import type { FleetPort } from '../contract/fleet-port';
import { isUnansweredUpdate } from './with-retry';

const TRANSIENT = [4 /* DEADLINE_EXCEEDED */, 8 /* RESOURCE_EXHAUSTED */, 14 /* UNAVAILABLE */];

function isTransient(err: unknown): boolean {
  // An update RPC that timed out (e.g. while the cluster's history service or database recovers): the
  // caller cannot tell whether it landed, and every scheduler message is idempotent, so retrying is right.
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  // Still unanswered after withRetry's attempts (workers stopping for a long while): nothing changed.
  if (isUnansweredUpdate(err)) return true;
  if (!(err instanceof ServiceError)) return err instanceof Error && err.name === 'TransportError';
  const code = (err.cause as { code?: number } | undefined)?.code;
  return code !== undefined && TRANSIENT.includes(code);
}

/**
 * Temporal being unreachable or overloaded is a 503 with Retry-After for the caller, not a 500:
 * nothing was changed and trying again later is the right move. Wraps any port of async methods
 * (the fleet, the schedules).
 */
export function withUnavailableAs503<T extends object = FleetPort>(fleet: T): T {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(fleet) as [string, (...a: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (isPgUnavailable(err))
          // the shared effect store (DATABASE_URL) is down or restarting
          throw new ApiError(
            'unavailable',
            'The database is unreachable right now; try again shortly.',
            undefined,
            5,
          );
        if (err instanceof NamespaceNotFoundError)
          // Seen on the cluster for a moment after its PostgreSQL restarted: the frontend's namespace
          // lookup failed while the namespace exists (it served the request before). Nothing was
          // changed; a retry finds it. A namespace that really is missing keeps answering this 503.
          throw new ApiError(
            'unavailable',
            `Temporal does not find the namespace '${err.namespace}' right now (a cluster recovering from a database restart, or a wrong TEMPORAL_NAMESPACE); try again shortly.`,
            undefined,
            5,
          );
        if (isTransient(err))
          throw new ApiError(
            'unavailable',
            'The scheduler is unreachable right now; try again shortly.',
            undefined,
            5,
          );
        throw err;
      }
    };
  }
  return wrapped as unknown as T;
}

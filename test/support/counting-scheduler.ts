import type { Client } from '@temporalio/client';

/**
 * A Temporal client whose scheduler counts the updates it has in flight at once (what
 * `history.maxInFlightUpdates` bounds); each answers `answer` after a few milliseconds.
 */
export function countingScheduler(answer: unknown = []) {
  const seen = { inFlight: 0, max: 0, answered: 0 };
  const client = {
    workflow: {
      getHandle: () => ({
        async executeUpdate() {
          seen.max = Math.max(seen.max, ++seen.inFlight);
          await new Promise((r) => setTimeout(r, 2 + Math.random() * 8));
          seen.inFlight--;
          seen.answered++;
          return answer;
        },
      }),
    },
    withAbortSignal: <R>(_signal: AbortSignal, fn: () => Promise<R>) => fn(),
  } as unknown as Client;
  return { client, seen };
}

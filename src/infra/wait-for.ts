import type { Logger } from 'pino';

export interface WaitOptions {
  /** First pause between attempts, ms (doubles up to maxDelayMs). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Stops waiting (the process is shutting down). */
  signal?: AbortSignal;
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Tries `attempt` until it succeeds, with a backoff, logging one clear line per retry: a part started
 * before what it depends on (Temporal, the model plane) waits for it instead of exiting, as process
 * managers and compose start parts in any order.
 */
export async function waitFor<T>(
  what: string,
  attempt: () => Promise<T>,
  log: Pick<Logger, 'info' | 'warn'>,
  opts: WaitOptions = {},
): Promise<T> {
  let delay = opts.initialDelayMs ?? 500;
  const maxDelay = opts.maxDelayMs ?? 5_000;
  for (let tries = 1; ; tries++) {
    try {
      const value = await attempt();
      if (tries > 1) log.info({ what, tries }, `${what} answered; continuing`);
      return value;
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      log.warn(
        { what, tries, retryInMs: delay },
        `waiting for ${what} (not answering yet: ${reason.split('\n')[0]}); retrying in ${(delay / 1000).toFixed(1)} s`,
      );
      await pause(delay, opts.signal);
      if (opts.signal?.aborted) throw err;
      delay = Math.min(maxDelay, delay * 2);
    }
  }
}

/** Resolves when `url` answers HTTP at all (any status): the server is up. */
export async function httpAnswers(url: string, timeoutMs = 3_000): Promise<void> {
  await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then((r) => r.body?.cancel());
}

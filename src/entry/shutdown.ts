/**
 * Runs a started process part until SIGINT or SIGTERM, then closes it once and exits.
 * A second signal exits at once. The part stays up until then even when nothing of its own keeps
 * Node's event loop busy (the Temporal part: its dev server is a child of the SDK's native runtime,
 * and without this the process ended, taking the dev server with it, a few seconds after starting).
 */
export function closeOnSignal(
  close: () => Promise<void>,
  log: { info(m: string): void; error(m: string): void },
): void {
  const keepAlive = setInterval(() => undefined, 1 << 30);
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) {
      log.error(`${signal} again: exiting now`);
      process.exit(130);
    }
    closing = true;
    log.info(`${signal}: shutting down (in-flight steps are allowed to finish)…`);
    close().then(
      () => {
        clearInterval(keepAlive);
        process.exit(0);
      },
      (err: unknown) => {
        log.error(`shutdown failed: ${String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** Prints a fatal start-up error as one readable sentence and exits non-zero. */
export function failStart(err: unknown): never {
  console.error(`\nFairway could not start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogLevel } from '@temporalio/worker';

let installed = false;

/**
 * Installs the SDK runtime once per process with a quieter logger (the default prints every
 * webpack module of the workflow bundle at INFO). Later calls are no-ops.
 */
export function installRuntime(level: LogLevel = 'WARN'): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: new DefaultLogger(level) });
  } catch {
    // Already instantiated by an earlier SDK call in this process: keep that runtime.
  }
}

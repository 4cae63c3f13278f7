import { Runtime } from '@temporalio/worker';
import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createLog } from './log';

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** The SDK's logger interface over a pino logger: its lines carry `component: "temporal-sdk"`. */
export function sdkLogger(log: Logger, level: LogLevel): SdkLogger {
  const child = log.child({ component: 'temporal-sdk' }, { level: PINO_LEVEL[level] });
  const at =
    (l: LogLevel) =>
    (message: string, meta?: LogMetadata): void =>
      child[PINO_LEVEL[l]](meta ?? {}, message);
  return {
    log: (l, message, meta) => at(l)(message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
}

/** The SDK's level for a process logging at `logLevel`: its debug output only when the process debugs. */
export function sdkLevel(logLevel: string): LogLevel {
  return logLevel === 'debug' || logLevel === 'trace' ? 'DEBUG' : 'WARN';
}

let installed = false;

/**
 * Installs the SDK runtime once per process, its logger (and the Rust core's, forwarded) writing
 * through `log` at `level` and above (the SDK at INFO lists every webpack module of the workflow
 * bundle). Later calls are no-ops.
 */
export function installRuntime(level: LogLevel = 'WARN', log: Logger = createLog('info')): void {
  if (installed) return;
  installed = true;
  try {
    // The Rust core's own warnings (slow workflow tasks, connection retries) are forwarded to the same
    // logger, so the process prints one log format; without `forward` the core writes its own.
    Runtime.install({
      logger: sdkLogger(log, level),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // Already instantiated by an earlier SDK call in this process: keep that runtime.
  }
}

import pino from 'pino';
import type { Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * Fairway's logger, one format per process: pino-pretty's lines on a terminal, pino's JSON lines
 * otherwise (a file, a pipe, a container's log collector). The Temporal SDK and the embedded dev
 * server log through it too (see runtime.ts and dev-server.ts).
 */
export function createLog(level: string, human: boolean = Boolean(process.stdout.isTTY)): Logger {
  const options = { level, serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err } };
  if (!human) return pino(options);
  return pino(
    options,
    pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
  );
}

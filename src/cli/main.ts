import { CommanderError } from 'commander';
import { loadCliConfig } from '../config';
import type { CliConfig } from '../config';
import { CliError, EXIT } from './client';
import type { Io } from './commands';
import { buildProgram } from './program';

/** Runs one invocation; returns the exit code (never throws). */
export async function run(
  argv: string[],
  io: Io,
  /** Tests pass their own; by default the config module reads the process's. */
  env?: Record<string, string | undefined>,
): Promise<number> {
  try {
    let config: CliConfig;
    try {
      config = loadCliConfig(env);
    } catch (err) {
      throw new CliError((err as Error).message, EXIT.usage);
    }
    await buildProgram(io, config).parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    // Commander has printed its message (and a suggestion); --help and --version end with 0.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof CliError) {
      io.err(`fairway: ${err.message}`);
      return err.exitCode;
    }
    io.err(`fairway: unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
    return EXIT.api;
  }
}

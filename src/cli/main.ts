import { parseArgs } from 'node:util';
import { loadCliConfig } from '../config';
import { apiClient, CliError, EXIT } from './client';
import * as cmd from './commands';
import type { Io, Options } from './commands';

const USAGE = `Usage: fairway <command> [options]

Commands:
  status            the scheduler: mode, in flight, queues, governor, counters
  tenants           tenants: weight, token share vs entitled share, queued, in flight, budget
  explain <runId>   why a run waits (waitingOn) and its position in its lane
  drain [--hold]    stop admitting; refuse new runs (503), or with --hold accept and hold them
  resume            admit again and open the intake
  watch             a live one-screen summary (plain lines when not a terminal)

Options:
  --json            print JSON instead of tables
  --interval <s>    watch: seconds between refreshes (default 2)
  --count <n>       watch: stop after n refreshes
  -h, --help        this help

Environment: FAIRWAY_URL (default http://localhost:3000), FAIRWAY_ADMIN_TOKEN (or ADMIN_TOKEN).
Exit codes: 0 ok, 1 API error or unreachable, 2 usage, 3 missing or refused token, 4 not found.`;

const positiveInt = (name: string, v: string | undefined, def: number | undefined) => {
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < 1)
    throw new CliError(`--${name} must be a positive integer.`, EXIT.usage);
  return Number(v);
};

/** Runs one invocation; returns the exit code (never throws). */
export async function run(
  argv: string[],
  io: Io,
  /** Tests pass their own; by default the config module reads the process's. */
  env?: Record<string, string | undefined>,
): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          json: { type: 'boolean', default: false },
          hold: { type: 'boolean', default: false },
          interval: { type: 'string' },
          count: { type: 'string' },
          help: { type: 'boolean', short: 'h', default: false },
        },
      });
    } catch (err) {
      throw new CliError(`${(err as Error).message}\n\n${USAGE}`, EXIT.usage);
    }
    const [command, ...rest] = parsed.positionals;
    if (parsed.values.help || !command) {
      io.out(USAGE);
      return parsed.values.help ? EXIT.ok : EXIT.usage;
    }
    const v = parsed.values;
    if (v.hold && command !== 'drain') throw new CliError('--hold applies to drain only.', EXIT.usage);
    const o: Options = {
      json: v.json,
      hold: v.hold,
      interval: positiveInt('interval', v.interval, 2)!,
      count: positiveInt('count', v.count, undefined),
    };
    const maxArgs = command === 'explain' ? 1 : 0;
    if (rest.length > maxArgs)
      throw new CliError(`Unexpected argument: ${rest[maxArgs]}\n\n${USAGE}`, EXIT.usage);
    let config;
    try {
      config = loadCliConfig(env);
    } catch (err) {
      throw new CliError((err as Error).message, EXIT.usage);
    }
    const api = apiClient(config.url, config.adminToken);
    switch (command) {
      case 'status':
        await cmd.status(api, io, o);
        break;
      case 'tenants':
        await cmd.tenants(api, io, o);
        break;
      case 'explain':
        await cmd.explain(api, io, o, rest[0]);
        break;
      case 'drain':
        await cmd.drain(api, io, o);
        break;
      case 'resume':
        await cmd.resume(api, io, o);
        break;
      case 'watch':
        await cmd.watch(api, io, o, config.url);
        break;
      default:
        throw new CliError(`Unknown command: ${command}\n\n${USAGE}`, EXIT.usage);
    }
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`fairway: ${err.message}`);
      return err.exitCode;
    }
    io.err(`fairway: unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
    return EXIT.api;
  }
}

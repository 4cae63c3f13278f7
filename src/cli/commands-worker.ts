import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { CliError, EXIT } from './client';
import type { Io } from './commands';

export interface WorkerFlags {
  agents: string[];
  effects?: string;
  tools?: string;
  scheduler?: boolean;
  builtIns?: boolean;
}

const list = (v: string, prev: string[] = []): string[] => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
];

/**
 * What a module exports by name (an effects or tools module): its functions, and for tools also
 * `{ handler, credential }` objects (the tool's own credential, read by the module as it likes).
 */
export async function functionsOf(file: string, what: string): Promise<Record<string, never>> {
  const abs = path.resolve(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  } catch (err) {
    throw new CliError(`could not load the ${what} module ${abs}: ${String(err)}`, EXIT.usage);
  }
  const served = (v: unknown) =>
    typeof v === 'function' ||
    (what === 'tools' &&
      typeof v === 'object' &&
      v !== null &&
      typeof (v as { handler?: unknown }).handler === 'function');
  const fns = Object.entries(mod).filter(([k, v]) => k !== 'default' && served(v));
  if (fns.length === 0) throw new CliError(`the ${what} module ${abs} exports no function`, EXIT.usage);
  return Object.fromEntries(fns) as Record<string, never>;
}

/** The part of startWorker (src/entry/start-worker.ts) this command uses. */
type StartWorker = (opts: {
  agents: readonly string[];
  effects?: Record<string, never>;
  tools?: Record<string, never>;
  scheduler?: boolean;
  builtIns?: boolean;
}) => Promise<{ agents: string[]; taskQueues: string[]; done: Promise<void>; close(): Promise<void> }>;

/**
 * The worker starter, loaded by path at run time: the operator-only CLI package (cli/, built from
 * src/cli alone) must not compile the whole server in, and has no worker.
 */
async function loadStartWorker(): Promise<StartWorker> {
  const file = path.join(__dirname, '..', 'entry', 'start-worker.ts');
  if (!existsSync(file))
    throw new CliError(
      '`fairway worker` comes with the fairway package, not the operator-only CLI.',
      EXIT.usage,
    );
  const mod = (await import(pathToFileURL(file).href)) as { startWorker: StartWorker };
  return mod.startWorker;
}

/**
 * `fairway worker`: serves the user's agents (and effects and tools) until SIGINT or SIGTERM. The
 * fleet's settings come from the environment (TEMPORAL_ADDRESS, TASK_QUEUE, DATA_DIR or DATABASE_URL,
 * MODEL_BASE_URL...), as the fleet's own processes read them.
 */
export function addWorkerCommand(program: Command, io: Io): void {
  program
    .command('worker')
    .description(
      'serve your own agents: fairway worker --agents ./agents.ts [--effects ./effects.ts] [--tools ./tools.ts]',
    )
    .requiredOption('--agents <paths>', 'agents modules (comma-separated, or the flag again)', list)
    .option('--effects <path>', 'a module exporting effect functions by name')
    .option('--tools <path>', 'a module exporting tool functions by name (each on its own task queue)')
    .option('--scheduler', 'also serve the scheduler and batch workflows (the base task queue)', false)
    .option('--built-ins', 'also serve the built-in agents', false)
    .action(async (flags: WorkerFlags) => {
      const startWorker = await loadStartWorker();
      const effects = flags.effects ? await functionsOf(flags.effects, 'effects') : undefined;
      const tools = flags.tools ? await functionsOf(flags.tools, 'tools') : undefined;
      const worker = await startWorker({
        agents: flags.agents,
        ...(effects ? { effects } : {}),
        ...(tools ? { tools } : {}),
        scheduler: flags.scheduler === true,
        builtIns: flags.builtIns === true,
      }).catch((err: unknown) => {
        throw new CliError(err instanceof Error ? err.message : String(err), EXIT.usage);
      });
      io.out(`fairway worker: serving ${worker.agents.join(', ')} on ${worker.taskQueues.join(', ')}`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        void worker.done.then(stop);
      });
      io.out('fairway worker: stopping');
      await worker.close();
    });
}

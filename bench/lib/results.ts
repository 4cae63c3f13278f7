import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../src/infra/temporal-cli';

/** The committed folder of benchmark output: one file per scenario, overwritten by its latest run. */
export const RESULTS_DIR = path.join(__dirname, '..', 'results');
const REPO_ROOT = path.join(__dirname, '..', '..');

/** Where results go: BENCH_RESULTS_DIR when set (scratch runs), else the committed folder. */
export function resultsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.BENCH_RESULTS_DIR ? path.resolve(env.BENCH_RESULTS_DIR) : RESULTS_DIR;
}

/** Where, when and from what a figure came: enough for a skeptic to rerun it. */
export interface Provenance {
  commit: string;
  /** The work tree had changes (outside bench/results/) when the run started. */
  dirty: boolean;
  startedAt: string;
  finishedAt: string;
  durationSeconds: number;
  machine: {
    cores: number;
    cpu: string;
    memoryGiB: number;
    platform: string;
    /** 1/5/15-minute load averages at start and end: the machine may be shared. */
    loadAverage: { start: number[]; end: number[] };
  };
  temporal: string;
  node: string;
}

export interface BenchResult<T = unknown> {
  scenario: string;
  /** The command that produced this file, as typed. */
  command: string;
  parameters: Record<string, unknown>;
  provenance: Provenance;
  data: T;
}

/** Records the scenario's parameters (the bench's parsed flags); the next result file carries them. */
export function recordParameters(p: Record<string, unknown>): void {
  parameters = { ...p };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function temporalVersion(): string {
  try {
    const cli = resolveTemporalCli(process.env.TEMPORAL_CLI_PATH);
    if (cli.kind !== 'path') return 'unknown (SDK download)';
    return execFileSync(cli.path, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** The command as a person reruns it: `npm run <script> -- <args>` when npm started it. */
export function commandLine(argv: string[] = process.argv, script = process.env.npm_lifecycle_event): string {
  const args = argv.slice(2).join(' ');
  if (script) return `npm run ${script}${args ? ` -- ${args}` : ''}`;
  return `npx tsx ${path.relative(REPO_ROOT, argv[1] ?? '')}${args ? ` ${args}` : ''}`;
}

/** Taken when the bench starts: the code that runs is the code checked out then. */
const started = {
  at: new Date(),
  load: os.loadavg(),
  commit: git(['rev-parse', 'HEAD']),
  status: git(['status', '--porcelain', '--', '.', ':(exclude)bench/results']),
};
let parameters: Record<string, unknown> = {};

/** `temporal`: the Temporal the run used when it is not the CLI's dev server (the cluster's own build). */
export function provenance(temporal?: string): Provenance {
  const finished = new Date();
  return {
    commit: started.commit,
    dirty: started.status !== '' && started.status !== 'unknown',
    startedAt: started.at.toISOString(),
    finishedAt: finished.toISOString(),
    durationSeconds: round2((finished.getTime() - started.at.getTime()) / 1000),
    machine: {
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: round2(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      loadAverage: { start: started.load.map(round2), end: os.loadavg().map(round2) },
    },
    temporal: temporal ?? temporalVersion(),
    node: process.version,
  };
}

/**
 * Writes `bench/results/<scenario>.json` (or `file`) with the data and its provenance; returns the path.
 * Every benchmark and drill writes through here, and `npm run bench:report` reads these files.
 */
export function writeResult(
  scenario: string,
  data: unknown,
  opts: { parameters?: Record<string, unknown>; file?: string; temporal?: string } = {},
): string {
  const file = opts.file ?? path.join(resultsDir(), `${scenario}.json`);
  const prov = provenance(opts.temporal);
  if (prov.dirty && path.resolve(path.dirname(file)) === path.resolve(RESULTS_DIR)) {
    throw new Error(
      `Not writing ${path.relative(REPO_ROOT, file)}: the work tree had uncommitted changes when the run ` +
        'started, so its figures could not be reproduced from a commit. Commit (or stash) and run again, ' +
        'or set BENCH_RESULTS_DIR to write the result elsewhere.',
    );
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const result: BenchResult = {
    scenario,
    command: commandLine(),
    parameters: opts.parameters ?? parameters,
    provenance: prov,
    data,
  };
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}

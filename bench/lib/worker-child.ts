import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tsEntry } from '../../src/infra/ts-entry';
import { logChildOutput } from '../../src/util/child-log';

const ROOT = path.join(__dirname, '..', '..');

/** Every child still alive: killed outright if this process exits without stopping them. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) killGroup(c);
});

/**
 * Each worker gets its own process group, killed as one: whatever the process started goes with it.
 */
function killGroup(c: ChildProcess): void {
  try {
    process.kill(-c.pid!, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

export interface WorkerChild {
  pid: number;
  buildId: string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
  alive(): boolean;
  /** SIGTERM and wait: the worker stops polling and lets in-flight activities finish. */
  stop(timeoutMs?: number): Promise<number | string>;
  /** SIGKILL and wait: a crash, nothing flushed. */
  kill(): Promise<number | string>;
}

/**
 * Starts `src/entry/worker.ts` as its own process, configured only by environment, the way a deploy
 * runs it, and resolves once it logs "worker started"; with `agents`, the user's worker instead, as a
 * user starts it (`fairway worker --agents <modules>`, ready once it says it serves). Its output goes
 * to `logFile`.
 */
export async function spawnWorker(opts: {
  env: Record<string, string>;
  buildId: string;
  logFile: string;
  readyTimeoutMs?: number;
  /** Another entry point (default `worker`) and the log line that says it is ready. */
  entry?: 'worker' | 'api';
  /** The user's agents modules: `fairway worker --agents <modules>` serves them (and no built-in). */
  agents?: readonly string[];
}): Promise<WorkerChild> {
  const entry = opts.agents ? 'fairway worker' : (opts.entry ?? 'worker');
  const readyLine = opts.agents ? 'fairway worker: serving' : `"msg":"${entry} started"`;
  const { command, args } = opts.agents
    ? {
        command: process.execPath,
        args: [path.join(ROOT, 'bin', 'fairway.cjs'), 'worker', '--agents', opts.agents.join(',')],
      }
    : tsEntry(path.join('src', 'entry', `${entry}.ts`));
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env, BUILD_ID: opts.buildId, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  logChildOutput(child, opts.logFile);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      killGroup(child); // the wrapper is gone: whatever it left behind goes too
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const signalAndWait = async (signal: NodeJS.Signals, timeoutMs: number) => {
    if (signal === 'SIGKILL') killGroup(child);
    else if (alive()) child.kill(signal);
    const timer = setTimeout(() => killGroup(child), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  let seen = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${entry} ${opts.buildId} not ready in ${opts.readyTimeoutMs ?? 60_000} ms`)),
      opts.readyTimeoutMs ?? 60_000,
    );
    child.stdout.on('data', (d: Buffer) => {
      seen = (seen + d.toString()).slice(-4096);
      if (seen.includes(readyLine)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(`${entry} ${opts.buildId} exited (${code}) before it was ready:\n${tail(opts.logFile)}`),
      );
    });
  });
  try {
    await ready;
  } catch (err) {
    await signalAndWait('SIGKILL', 5000);
    throw err;
  }
  return {
    pid: child.pid!,
    buildId: opts.buildId,
    exited,
    alive,
    stop: (timeoutMs = 120_000) => signalAndWait('SIGTERM', timeoutMs),
    kill: () => signalAndWait('SIGKILL', 5000),
  };
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

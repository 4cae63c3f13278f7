import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A command a user runs in a shell, with its output lines. */
export interface Proc {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  /** Resolves with the first line matching `re` (rejects when the process exits first). */
  line(re: RegExp, ms: number): Promise<string>;
}

/**
 * Output for an error message, without stack frames: vitest reads the source map of every file a
 * message's frames name, and a frame into a native module stops the run.
 */
export const shown = (lines: string[]) =>
  lines
    .filter((l) => !/^\s+at /.test(l))
    .map((l) => l.replaceAll('\\n    at ', ' < '))
    .join('\n');

/** `command args` as a user runs it, in its own process group (so stopping it stops its children). */
export function userCommand(command: string, args: string[], cwd: string, env: Record<string, string>): Proc {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      for (const w of waiters.filter((x) => x.re.test(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const tail = () => shown(lines.slice(-60));
  const name = [command, ...args].join(' ');
  return {
    child,
    lines,
    exited,
    line: (re, ms) =>
      new Promise<string>((resolve, reject) => {
        const found = lines.find((l) => re.test(l));
        if (found) return resolve(found);
        const timer = setTimeout(
          () => reject(new Error(`${name}: no ${re} within ${ms} ms:\n${tail()}`)),
          ms,
        );
        waiters.push({ re, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited ${code} before ${re}:\n${tail()}`));
        });
      }),
  };
}

/** An npm script as a user runs it. */
export const npm = (args: string[], cwd: string, env: Record<string, string>): Proc =>
  userCommand('npm', args, cwd, env);

/** SIGTERM to the process group, SIGKILL after 15 s. */
export async function stop(p: Proc | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.pid === undefined) return;
  const pid = p.child.pid;
  process.kill(-pid, 'SIGTERM');
  const killed = await Promise.race([
    p.exited.then(() => true),
    new Promise((r) => setTimeout(() => r(false), 15_000)),
  ]);
  if (!killed) process.kill(-pid, 'SIGKILL');
}

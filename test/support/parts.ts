import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { tsEntry } from '../../src/infra/ts-entry';

const root = path.resolve(__dirname, '..', '..');

/** A port nothing listens on right now, for a part to bind later. */
export { freePort } from '../../src/infra/cluster/child';

export interface Part {
  name: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `src/entry/<name>.ts` as its own process (and process group, so that everything it starts,
 * such as the Temporal dev server, can be checked for afterwards), with exactly `env` on top of PATH/HOME.
 */
export function startPart(name: string, env: Record<string, string>): Part {
  const { command, args } = tsEntry(path.join('src', 'entry', `${name}.ts`));
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, output: () => out, exited };
}

/** Whether any process of the part's group is still alive. */
export function groupAlive(p: Part): boolean {
  try {
    process.kill(-p.child.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the part's process (as a process manager sends it), then waits until no process of its
 * group is left: whatever it started must end with it.
 */
export async function stopPart(p: Part, timeoutMs = 60_000): Promise<boolean> {
  if (!groupAlive(p)) return true;
  try {
    process.kill(p.child.pid!, 'SIGTERM');
  } catch {
    /* already gone */
  }
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(p) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  return !groupAlive(p);
}

/** Last resort after a failed test: nothing of the part may outlive it. */
export function killPart(p: Part): void {
  try {
    process.kill(-p.child.pid!, 'SIGKILL');
  } catch {
    /* gone */
  }
}

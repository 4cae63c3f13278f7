import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { logChildOutput } from '../../util/child-log';

/** Every child still alive: killed outright if this process exits without stopping them. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) killGroup(c, 'SIGKILL');
});

/** Each child leads its own process group (wrappers such as tsx fork): a signal goes to the group. */
function killGroup(c: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-c.pid!, signal);
  } catch {
    /* already gone */
  }
}

export interface Child {
  name: string;
  pid: number;
  logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
  alive(): boolean;
  /** Sends `signal` (default SIGTERM) and waits; SIGKILL after `timeoutMs`. */
  stop(opts?: { signal?: NodeJS.Signals; timeoutMs?: number }): Promise<number | string>;
  /** SIGKILL and wait: a crash, nothing flushed. */
  kill(): Promise<number | string>;
  /** The last characters of the log (for error messages). */
  tail(chars?: number): string;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  logFile: string;
  /** Resolves once this text appears on stdout or stderr. */
  readyText?: string;
  readyTimeoutMs?: number;
}

/** Starts a program in its own process group, its output appended to `logFile`. */
export async function spawnChild(opts: SpawnOptions): Promise<Child> {
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  await spawned;
  live.add(child);
  logChildOutput(child, opts.logFile);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      killGroup(child, 'SIGKILL'); // the leader is gone: whatever it left behind goes too
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const tail = (chars = 2000) => {
    try {
      return readFileSync(opts.logFile, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  };
  const stop = async ({
    signal = 'SIGTERM',
    timeoutMs = 30_000,
  }: { signal?: NodeJS.Signals; timeoutMs?: number } = {}) => {
    // A graceful signal goes to the leader only: wrappers (tsx) relay it, and a process that got it
    // twice would take the second as "exit now". SIGKILL takes the whole group.
    if (signal === 'SIGKILL') killGroup(child, signal);
    else if (alive()) child.kill(signal);
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const handle: Child = {
    name: opts.name,
    pid: child.pid!,
    logFile: opts.logFile,
    exited,
    alive,
    stop,
    kill: () => stop({ signal: 'SIGKILL', timeoutMs: 5000 }),
    tail,
  };
  if (opts.readyText) {
    const text = opts.readyText;
    const timeoutMs = opts.readyTimeoutMs ?? 120_000;
    let seen = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${opts.name} not ready in ${timeoutMs} ms:\n${tail()}`)),
        timeoutMs,
      );
      const onData = (d: Buffer) => {
        seen = (seen + d.toString()).slice(-8192);
        if (seen.includes(text)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${opts.name} exited (${code}) before it was ready:\n${tail()}`));
      });
    });
    try {
      await ready;
    } catch (err) {
      await handle.kill();
      throw err;
    }
  }
  return handle;
}

const canBind = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host }, () => srv.close(() => resolve(true)));
  });

/**
 * Distinct free ports below the kernel's ephemeral range (32768 and up): ports there are not handed
 * out to outgoing connections or to another process's `listen(0)`, so a port chosen now is still free
 * when the process it is meant for binds it seconds later (a port the kernel picked was taken in the
 * meantime by a busy suite's outgoing connections: EADDRINUSE). Temporal also stores membership ports
 * in a SMALLINT column (at most 32767).
 */
export async function freeLowPorts(
  n: number,
  host = '127.0.0.1',
  lo = 20_000,
  hi = 32_000,
): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < n; tries++) {
    if (tries > 2000) throw new Error(`no ${n} free ports between ${lo} and ${hi}`);
    const port = lo + Math.floor(Math.random() * (hi - lo));
    if (!ports.has(port) && (await canBind(host, port))) ports.add(port);
  }
  return [...ports];
}

/** A free TCP port on `host` for another process to bind later (below the ephemeral range; see freeLowPorts). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return (await freeLowPorts(1, host))[0]!;
}

/** True when something accepts TCP connections at host:port. */
export function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.setTimeout(2000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(false));
  });
}

/** Waits until host:port accepts connections; fails early if `child` exits. */
export async function waitForPort(
  host: string,
  port: number,
  opts: { child?: Child; timeoutMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    if (await portOpen(host, port)) return;
    if (opts.child && !opts.child.alive())
      throw new Error(`${opts.child.name} exited before it opened ${host}:${port}:\n${opts.child.tail()}`);
    if (Date.now() > deadline)
      throw new Error(`nothing listens on ${host}:${port} after ${opts.timeoutMs ?? 120_000} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { inject } from 'vitest';
import { freePort } from '../../src/infra/cluster/child';

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

/** SIGTERM to the process group; SIGKILL to what is left of it once its leader exits, or after 15 s. */
export async function stop(p: Proc | undefined): Promise<void> {
  if (!p || p.child.pid === undefined) return;
  const pid = p.child.pid;
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(-pid, s);
    } catch {
      // ESRCH: nothing of the group is left.
    }
  };
  const leaderGone = p.child.exitCode !== null || p.child.signalCode !== null;
  signal('SIGTERM');
  if (!leaderGone) await Promise.race([p.exited, new Promise((r) => setTimeout(r, 15_000))]);
  // What outlived its leader (a program that ignores SIGTERM under an `npx` that did not) goes too.
  signal('SIGKILL');
}

/** What a user's worker and client need from a stack started by `startNpmStack`. */
export interface NpmStackReady {
  /** The API's URL, and the key of a tenant named `<tenant>-<id>`. */
  api: string;
  apiKey: string;
  id: string;
  /** The environment a worker of the user's points at this stack with. */
  workerEnv: Record<string, string>;
}

/**
 * Fairway's stack as a user starts it (`npm start` in the checkout, AGENTS naming their agents
 * module), on the suite's dev server with a task queue and scheduler of its own and free ports.
 * `proc` is there at once (stop it after the test); `ready` resolves once it serves, with a tenant.
 */
export function startNpmStack(
  root: string,
  o: {
    /** Names the task queue and scheduler (`fairway-<label>-<id>`); the tenant too, unless `tenant`. */
    label: string;
    tenant?: string;
    dataDir: string;
    agents: string;
    admin: string;
    env?: Record<string, string>;
  },
): { proc: Promise<Proc>; ready: Promise<NpmStackReady> } {
  const id = Math.random().toString(16).slice(2, 10);
  const shared = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TASK_QUEUE: `fairway-${o.label}-${id}`,
    SCHEDULER_WORKFLOW_ID: `scheduler-${o.label}-${id}`,
    DATA_DIR: o.dataDir,
    LOG_LEVEL: 'warn',
  };
  const ports = Promise.all([freePort(), freePort()]);
  const proc = ports.then(([port, simPort]) =>
    npm(['start'], root, {
      ...shared,
      PORT: String(port),
      SIM_PORT: String(simPort),
      ADMIN_TOKEN: o.admin,
      AGENTS: o.agents,
      ...o.env,
      LOG_LEVEL: 'info',
    }),
  );
  const ready = (async () => {
    const [port, simPort] = await ports;
    await (await proc).line(/Fairway is up/, 180_000);
    const api = `http://127.0.0.1:${port}`;
    const tenant = await fetch(`${api}/v1/admin/tenants/${o.tenant ?? o.label}-${id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${o.admin}`, 'content-type': 'application/json' },
      body: '{}',
    });
    if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status} ${await tenant.text()}`);
    const apiKey = ((await tenant.json()) as { apiKey: string }).apiKey;
    return { api, apiKey, id, workerEnv: { ...shared, MODEL_BASE_URL: `http://127.0.0.1:${simPort}` } };
  })();
  return { proc, ready };
}

const INSTALL_LOCK = path.join(os.tmpdir(), 'fairway-e2e-install.lock');
/** A lock older than this was left by a process that died holding it. */
const STALE_LOCK_MS = 10 * 60_000;

/**
 * Runs `install` while no other test file installs: an install that depends on this checkout by
 * `file:` runs its `prepare` (the build into dist/), and two at once would write dist/ together
 * while one's programs read it. The lock is a directory (mkdir is atomic), removed when done.
 */
export async function withInstallLock<T>(install: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      mkdirSync(INSTALL_LOCK);
      break;
    } catch {
      const age = Date.now() - (statSync(INSTALL_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(INSTALL_LOCK, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await install();
  } finally {
    rmSync(INSTALL_LOCK, { recursive: true, force: true });
  }
}

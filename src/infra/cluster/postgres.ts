import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { freePort, spawnChild } from './child';
import type { Child } from './child';

/** Where Debian puts PostgreSQL's server programs (`initdb`, `postgres`), newest version first. */
export function findPostgresBin(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return path.dirname(onPath);
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

export interface Postgres {
  host: string;
  port: number;
  user: string;
  password: string;
  /** True when this start ran initdb (a new, empty cluster). */
  fresh: boolean;
  /** A `postgres://` URL for `database`. */
  url(database: string): string;
  /** Creates `database` unless it exists. */
  ensureDatabase(database: string): Promise<void>;
  /** Fast shutdown (SIGINT): open transactions are rolled back, the data is kept. */
  stop(): Promise<void>;
  /** SIGKILL, then start again on the same port and directory (crash recovery). */
  restart(opts?: { kill?: boolean }): Promise<void>;
  child(): Child;
}

export interface PostgresOptions {
  /** The data directory (created with initdb when empty). */
  dir: string;
  host?: string;
  /** undefined: a free port. */
  port?: number;
  /** Log file for the server's output. */
  logFile: string;
  user?: string;
  log?: (m: string) => void;
  /**
   * false: `fsync=off` (tests' throwaway servers). A SIGKILLed server loses nothing either way (the
   * kernel keeps what it wrote); what fsync=off skips after such a crash is the start-up pass that
   * fsyncs every file of the data directory, which on a busy disk can take minutes. Default true.
   */
  fsync?: boolean;
  /** How long a start may take to print "ready" (default 120 s). */
  readyTimeoutMs?: number;
}

/**
 * PostgreSQL refuses to run as root. As root, the server programs run as the `postgres` user that
 * Debian's package creates (through `setpriv`, which execs, so the pid is the server's own).
 */
function asServerUser(
  bin: string,
  args: string[],
): { command: string; args: string[]; uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return { command: bin, args };
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  const uid = id('-u');
  const gid = id('-g');
  return {
    command: 'setpriv',
    args: [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', bin, ...args],
    uid,
    gid,
  };
}

/**
 * The first directory on the way to `dir` (its ancestors, then `dir` itself) that `canEnter` refuses,
 * or undefined when every one can be entered.
 */
export function firstUnreachable(dir: string, canEnter: (p: string) => boolean): string | undefined {
  const chain: string[] = [];
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    chain.unshift(p);
    if (path.dirname(p) === p) break;
  }
  return chain.find((p) => !canEnter(p));
}

const mode = (p: string) => `0${(statSync(p).mode & 0o777).toString(8)}`;

/**
 * As root the server runs as `postgres`, which must reach `dir` through every directory above it.
 * `dir` is handed to that user, and directories the launcher made on the way (`below` and under)
 * are opened for passing through (o+x); a directory of the caller's that blocks the way is not
 * changed, and the error says what to change.
 */
function prepareForServerUser(dir: string, below: string, uid: number, gid: number, bin: string): void {
  const target = path.resolve(dir);
  chownSync(target, uid, gid);
  const owned = path.resolve(below);
  for (let p = path.dirname(target); p === owned || p.startsWith(owned + path.sep); p = path.dirname(p)) {
    chmodSync(p, (statSync(p).mode & 0o7777) | 0o001);
    if (p === owned) break;
  }
  const enter = (p: string) =>
    spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', 'test', '-x', p])
      .status === 0;
  const blocked = firstUnreachable(dir, enter);
  if (blocked === undefined) return;
  const st = statSync(blocked);
  throw new Error(
    `PostgreSQL runs as the postgres user (uid ${uid}) when the launcher is root, and it cannot reach ${dir}: ` +
      `${blocked} is mode ${mode(blocked)}, owned by uid ${st.uid}. Either let postgres through ` +
      `(\`setfacl -m u:postgres:x ${blocked}\`, or \`chmod o+x ${blocked}\`), or set DATA_DIR to a ` +
      `directory postgres can reach (e.g. under /var/tmp), or run the launcher as a user other than root. ` +
      `(${path.join(bin, 'initdb')} would fail with "Permission denied".)`,
  );
}

/**
 * Starts a private PostgreSQL server (Debian's packages, no service manager): `initdb` into `dir` on
 * first use, trust authentication, listening on loopback only, no Unix socket. Stopped with `stop()`.
 */
export async function startPostgres(opts: PostgresOptions): Promise<Postgres> {
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed (no initdb on PATH or under /usr/lib/postgresql). On Debian: apt-get install postgresql',
    );
  const host = opts.host ?? '127.0.0.1';
  const user = opts.user ?? 'temporal';
  const password = 'temporal';
  const log = opts.log ?? (() => {});
  // The first directory this call creates: from there down the directories are the launcher's own.
  const created = mkdirSync(opts.dir, { recursive: true }) ?? opts.dir;
  const fresh = !existsSync(path.join(opts.dir, 'PG_VERSION'));
  if (fresh) {
    const init = asServerUser(path.join(bin, 'initdb'), [
      '-D',
      opts.dir,
      '-U',
      user,
      '--auth=trust',
      '--encoding=UTF8',
      '--no-locale',
      '--no-instructions',
    ]);
    if (init.uid !== undefined) prepareForServerUser(opts.dir, created, init.uid, init.gid!, bin);
    log(`initdb ${opts.dir}`);
    const r = spawnSync(init.command, init.args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`initdb failed: ${r.stderr || r.stdout}`);
  }
  let port = opts.port ?? (await freePort(host));
  const launch = async () => {
    const run = asServerUser(path.join(bin, 'postgres'), [
      '-D',
      opts.dir,
      '-p',
      String(port),
      '-c',
      `listen_addresses=${host}`,
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=400',
      '-c',
      'shared_buffers=128MB',
      ...(opts.fsync === false ? ['-c', 'fsync=off'] : []),
    ]);
    return spawnChild({
      name: 'postgres',
      command: run.command,
      args: run.args,
      logFile: opts.logFile,
      readyText: 'database system is ready to accept connections',
      readyTimeoutMs: opts.readyTimeoutMs ?? 120_000,
    });
  };
  const firstLaunch = async (tries = 1): Promise<Child> =>
    launch().catch(async (err: unknown) => {
      // A port chosen here can be taken by another process before PostgreSQL binds it (parallel test
      // files each start a server): choose another. A port the caller chose is not changed.
      if (opts.port !== undefined || tries >= 5 || !String(err).includes('Address already in use')) throw err;
      port = await freePort(host);
      return firstLaunch(tries + 1);
    });
  let child = await firstLaunch();
  const url = (database: string) => `postgres://${user}:${password}@${host}:${port}/${database}`;
  return {
    host,
    port,
    user,
    password,
    fresh,
    url,
    async ensureDatabase(database) {
      const c = new PgClient({ connectionString: url('postgres') });
      await c.connect();
      try {
        const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
        if (r.rowCount === 0) await c.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      } finally {
        await c.end();
      }
    },
    async stop() {
      await child.stop({ signal: 'SIGINT', timeoutMs: 60_000 });
    },
    async restart({ kill = true } = {}) {
      if (kill) await child.kill();
      else await child.stop({ signal: 'SIGINT', timeoutMs: 60_000 });
      child = await launch();
    },
    child: () => child,
  };
}

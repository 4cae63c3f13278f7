import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findPostgresBin, startPostgres } from '../../src/infra/cluster/postgres';
import type { Postgres } from '../../src/infra/cluster/postgres';

const INSTALL_HINT = 'initdb not found (on Debian: apt-get install postgresql)';

/**
 * Why PostgreSQL store tests are skipped on this machine, or undefined when they run. With CI set
 * they always run, so a missing PostgreSQL fails them (startTestPostgres throws) rather than
 * skipping them.
 */
export const postgresMissing: string | undefined =
  findPostgresBin() || process.env.CI ? undefined : `PostgreSQL store tests skipped: ${INSTALL_HINT}.`;

export interface TestPostgres {
  pg: Postgres;
  /** A new empty database's URL (each test gets its own). */
  freshDatabase(): Promise<string>;
  stop(): Promise<void>;
}

let counter = 0;

/** A private PostgreSQL server in a temp directory on a free loopback port (initdb + postgres). */
export async function startTestPostgres(): Promise<TestPostgres> {
  if (!findPostgresBin()) throw new Error(`PostgreSQL store tests cannot run: ${INSTALL_HINT}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'fairway-pg-'));
  chmodSync(dir, 0o755); // the server runs as the postgres user when the tests run as root
  // fsync off: a throwaway server (see PostgresOptions.fsync), and the outage tests SIGKILL it. A start
  // that hangs fails after 60 s, within the tests' own 120 s, so its log tail shows in the failure.
  const pg = await startPostgres({
    dir: path.join(dir, 'data'),
    logFile: path.join(dir, 'postgres.log'),
    fsync: false,
    readyTimeoutMs: 60_000,
  });
  return {
    pg,
    async freshDatabase() {
      const name = `t_${process.pid}_${++counter}`;
      await pg.ensureDatabase(name);
      return pg.url(name);
    },
    async stop() {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

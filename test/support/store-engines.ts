import { join } from 'node:path';
import { postgresMissing, startTestPostgres } from './postgres';
import type { TestPostgres } from './postgres';

/** One engine a store suite runs against: a SQLite file or a PostgreSQL database. */
export interface StoreEngine {
  name: string;
  /** Why the engine's tests are skipped here, or undefined when they run. */
  skip: string | undefined;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A new, empty store location (a file path or a database URL). */
  location(): Promise<string>;
}

/** SQLite files named `file`, each in a new nested directory under `dir()` (the test's temp dir). */
export function sqliteEngine(file: string, dir: () => string): StoreEngine {
  let n = 0;
  return {
    name: 'SQLite',
    skip: undefined,
    async setup() {},
    async teardown() {},
    async location() {
      return join(dir(), `nested-${++n}`, file);
    },
  };
}

/** A private PostgreSQL server for the suite (initdb into a temp dir); a new database per location. */
export function postgresEngine(): StoreEngine {
  let server: TestPostgres | undefined;
  if (postgresMissing) console.warn(postgresMissing);
  return {
    name: 'PostgreSQL',
    skip: postgresMissing,
    async setup() {
      server = await startTestPostgres();
    },
    async teardown() {
      await server?.stop();
    },
    location: () => server!.freshDatabase(),
  };
}

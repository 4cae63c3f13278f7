import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPostgresBin, firstUnreachable, startPostgres } from '../../src/infra/cluster/postgres';

describe('firstUnreachable', () => {
  it('names the first directory on the way that cannot be entered, from the root down', () => {
    const closed = new Set(['/data/private', '/data/private/cluster']);
    expect(firstUnreachable('/data/private/cluster/pg', (p) => !closed.has(p))).toBe('/data/private');
    expect(firstUnreachable('/data/open/cluster/pg', (p) => !closed.has(p))).toBeUndefined();
    expect(firstUnreachable('/', () => false)).toBe('/');
  });
});

const asRoot = process.getuid?.() === 0 && findPostgresBin() !== undefined;
/**
 * It needs root and PostgreSQL; without them it skips, unless CI is set (`.ci/run` runs as root and
 * installs PostgreSQL): then it fails.
 */
const skipRoot = !asRoot && !process.env.CI;
if (skipRoot) console.warn('PostgreSQL launcher as root: skipped (not root, or initdb not found)');

/** `npm run cluster` as root with DATA_DIR from `mktemp -d` (mode 0700): the case. */
describe.skipIf(skipRoot)('the PostgreSQL launcher as root', () => {
  beforeAll(() => {
    if (!asRoot) throw new Error('CI is set: this test runs as root with PostgreSQL installed (initdb)');
  });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fairway-pg-dir-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const opts = () => ({
    dir: path.join(dataDir, 'cluster', 'pg'),
    logFile: path.join(dataDir, 'postgres.log'),
    fsync: false,
  });

  it('refuses a private DATA_DIR with exactly what to change, then starts once postgres may pass', async () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await expect(startPostgres(opts())).rejects.toThrow(
      `it cannot reach ${path.join(dataDir, 'cluster', 'pg')}: ${dataDir} is mode 0700, owned by uid 0. ` +
        `Either let postgres through (\`setfacl -m u:postgres:x ${dataDir}\`, or \`chmod o+x ${dataDir}\`)`,
    );
    // What the message says to do; the directories the launcher made below it are its own business.
    chmodSync(dataDir, 0o701);
    const pg = await startPostgres(opts());
    try {
      expect(pg.fresh).toBe(true);
      await pg.ensureDatabase('fairway_probe');
      expect(statSync(path.join(dataDir, 'cluster', 'pg')).uid).not.toBe(0);
    } finally {
      await pg.stop();
    }
  }, 120_000);
});

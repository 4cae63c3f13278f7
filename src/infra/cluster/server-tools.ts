import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { toolsDir } from '../temporal-cli';

/** The Temporal server release `npm run cluster` runs (docker-compose pins the same). */
export const TEMPORAL_SERVER_VERSION = '1.32.2';
/** The Web UI server release (serves the UI's prebuilt assets, which its Go module embeds). */
export const TEMPORAL_UI_VERSION = '2.58.1';
/** v1.32 needs a newer Go than Debian's; the go command fetches this toolchain from the module proxy. */
export const GO_TOOLCHAIN = 'go1.27.3';

export const serverBinDir = path.join(toolsDir, `temporal-server-${TEMPORAL_SERVER_VERSION}`, 'bin');
export const serverBinary = path.join(serverBinDir, 'server');
/** `go install …/cmd/tools/sql` names it `sql`; renamed to its release name. */
export const sqlToolBinary = path.join(serverBinDir, 'temporal-sql-tool');
export const uiBinDir = path.join(toolsDir, `temporal-ui-server-${TEMPORAL_UI_VERSION}`, 'bin');
export const uiBinary = path.join(uiBinDir, 'ui-server');

const SERVER_PACKAGES = [
  `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
  `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
];
const UI_PACKAGE = `github.com/temporalio/ui-server/v2/cmd/server@v${TEMPORAL_UI_VERSION}`;

export function serverToolsPresent(): boolean {
  return existsSync(serverBinary) && existsSync(sqlToolBinary);
}

function goInstall(packages: string[], gobin: string, log: (m: string) => void, quiet = false): void {
  const go = spawnSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).stdout.trim();
  if (!go)
    throw new Error(
      `Go is not installed, and the Temporal server is not in ${gobin}. Install Go (any 1.21+; it fetches ${GO_TOOLCHAIN} itself) and run again.`,
    );
  mkdirSync(gobin, { recursive: true });
  log(`go install ${packages.join(' ')} (GOTOOLCHAIN=${GO_TOOLCHAIN}, nice 19) …`);
  const started = Date.now();
  const r = spawnSync('nice', ['-n', '19', go, 'install', ...packages], {
    // Outside the project directory: `go install pkg@version` ignores go.mod files, but not go.work.
    cwd: gobin,
    env: { ...process.env, GOBIN: gobin, GOTOOLCHAIN: GO_TOOLCHAIN },
    stdio: ['ignore', quiet ? 'pipe' : 'inherit', quiet ? 'pipe' : 'inherit'],
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    const why = quiet ? `: ${String(r.stderr).trim().split('\n').slice(-4).join(' ')}` : '';
    throw new Error(`go install failed (exit ${r.status ?? r.signal})${why}`);
  }
  log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * Makes sure the Temporal server and its schema tool are in `.tools/`: builds them from the Go module
 * proxy with `go install` when missing. The first build takes minutes (about 12 on 2 busy cores).
 */
export function ensureServerTools(log: (m: string) => void): void {
  if (serverToolsPresent()) return;
  log(
    `The Temporal server ${TEMPORAL_SERVER_VERSION} is not built yet: building it into ${serverBinDir} (once; slow, ~10–15 minutes on 2 cores).`,
  );
  goInstall(SERVER_PACKAGES, serverBinDir, log);
  const sql = path.join(serverBinDir, 'sql');
  if (existsSync(sql)) renameSync(sql, sqlToolBinary);
  if (!serverToolsPresent())
    throw new Error(`go install finished but ${serverBinary} or ${sqlToolBinary} is missing.`);
}

/** Written when the Web UI cannot be built here, so later starts do not try for minutes again. */
export const uiBuildFailedMarker = path.join(uiBinDir, '..', 'build-failed.txt');

/**
 * Builds the Web UI server if missing; returns its path, or undefined (with the reason logged).
 * Checked on this machine kind: the Go module proxy refuses two of its dependencies
 * (github.com/labstack/echo/v4@v4.16.1 and go.temporal.io/api@v1.64.0 answer 403 "not available"),
 * so the build fails; the reason is kept in `uiBuildFailedMarker` (delete it to try again).
 */
export function ensureUiServer(log: (m: string) => void): string | undefined {
  if (existsSync(uiBinary)) return uiBinary;
  if (existsSync(uiBuildFailedMarker)) {
    log(
      `The Web UI is not built: an earlier build failed (${readFileSync(uiBuildFailedMarker, 'utf8').trim()}). ` +
        `Delete ${uiBuildFailedMarker} to try again. The cluster runs without it.`,
    );
    return undefined;
  }
  try {
    goInstall([UI_PACKAGE], uiBinDir, log, true);
    const built = path.join(uiBinDir, 'server');
    if (existsSync(built)) renameSync(built, uiBinary);
    return existsSync(uiBinary) ? uiBinary : undefined;
  } catch (err) {
    mkdirSync(uiBinDir, { recursive: true });
    writeFileSync(uiBuildFailedMarker, `${String(err)}\n`);
    log(`The Web UI could not be built (${String(err)}); the cluster runs without it.`);
    return undefined;
  }
}

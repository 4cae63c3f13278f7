import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { toolsDir } from './temporal-cli';

/** The pinned PyPI release of the API fuzzer `npm run fuzz` drives (schemathesis.readthedocs.io). */
export const SCHEMATHESIS_VERSION = '4.32.5';

const venvDir = path.join(toolsDir, `schemathesis-${SCHEMATHESIS_VERSION}`);
const venvBinary = path.join(venvDir, 'bin', 'schemathesis');
/** Where `pip install --target` puts it when the Python has no venv module (run as `python -m`). */
const targetDir = path.join(toolsDir, `schemathesis-${SCHEMATHESIS_VERSION}-target`);

/** How to run the fuzzer: a command, the arguments before schemathesis's own, and extra environment. */
export interface SchemathesisCommand {
  command: string;
  prefix: string[];
  env: Record<string, string>;
  source: 'tools' | 'venv' | 'target';
}

const PYTHONS = ['python3', 'python'];

function answersVersion(cmd: SchemathesisCommand): boolean {
  const r = spawnSync(cmd.command, [...cmd.prefix, '--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...cmd.env },
  });
  return r.status === 0 && r.stdout.includes(SCHEMATHESIS_VERSION);
}

function run(command: string, args: string[], log: (m: string) => void): boolean {
  const r = spawnSync(command, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.status !== 0) log(`${command} ${args.slice(0, 3).join(' ')} failed: ${(r.stderr ?? '').trim()}`);
  return r.status === 0;
}

const pipArgs = ['-m', 'pip', 'install', '--disable-pip-version-check', '--quiet'];
const requirement = `schemathesis==${SCHEMATHESIS_VERSION}`;

const fromVenv = (source: 'tools' | 'venv'): SchemathesisCommand => ({
  command: venvBinary,
  prefix: [],
  env: {},
  source,
});
const fromTarget = (python: string): SchemathesisCommand => ({
  command: python,
  prefix: ['-m', 'schemathesis.cli'],
  env: { PYTHONPATH: targetDir },
  source: 'target',
});

/**
 * Finds the pinned schemathesis in the project's `.tools/`, or installs it there from PyPI: into a
 * virtual environment (`.tools/schemathesis-<version>/`), or with `pip install --target` when the
 * Python has no venv module. Throws with the manual command when neither works.
 */
export function resolveSchemathesis(log: (m: string) => void = () => {}): SchemathesisCommand {
  if (existsSync(venvBinary) && answersVersion(fromVenv('tools'))) return fromVenv('tools');
  for (const python of PYTHONS) {
    if (existsSync(targetDir) && answersVersion(fromTarget(python))) return fromTarget(python);
  }
  for (const python of PYTHONS) {
    log(`Installing ${requirement} from PyPI into ${venvDir} …`);
    if (
      run(python, ['-m', 'venv', venvDir], log) &&
      run(path.join(venvDir, 'bin', 'python'), [...pipArgs, requirement], log) &&
      answersVersion(fromVenv('venv'))
    )
      return fromVenv('venv');
    log(`Installing ${requirement} with pip --target ${targetDir} …`);
    if (
      run(python, [...pipArgs, '--target', targetDir, requirement], log) &&
      answersVersion(fromTarget(python))
    )
      return fromTarget(python);
  }
  throw new Error(
    `schemathesis ${SCHEMATHESIS_VERSION} could not be installed. Install it with ` +
      `\`python3 -m venv ${venvDir} && ${venvDir}/bin/pip install ${requirement}\`.`,
  );
}

import path from 'node:path';
import { tsEntry } from '../ts-entry';
import { spawnChild } from './child';
import type { Child } from './child';

const projectRoot = path.resolve(__dirname, '..', '..', '..');

export type FairwayRole = 'worker' | 'api' | 'sim' | 'sink';

const READY: Record<FairwayRole, string> = {
  worker: '"msg":"worker started"',
  api: '"msg":"api started"',
  sim: '"msg":"model-plane simulator started"',
  sink: '"msg":"effect sink started"',
};

/**
 * Starts one Fairway part (`src/entry/<role>.ts`) as its own process, configured only by its
 * environment the way a deploy runs it, and resolves once it says it started.
 */
export function spawnFairway(opts: {
  role: FairwayRole;
  name: string;
  env: Record<string, string | undefined>;
  logDir: string;
  readyTimeoutMs?: number;
}): Promise<Child> {
  return spawnChild({
    name: opts.name,
    ...tsEntry(path.join('src', 'entry', `${opts.role}.ts`)),
    cwd: projectRoot,
    env: opts.env,
    logFile: path.join(opts.logDir, `${opts.name}.log`),
    readyText: READY[opts.role],
    readyTimeoutMs: opts.readyTimeoutMs ?? 180_000,
  });
}

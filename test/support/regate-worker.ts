import path from 'node:path';
import { startBundleWorker } from './bundle-worker';
import type { TestStack } from './stack';

/** Module path of the `regate` agent, for the stack's AGENTS. */
export const REGATE_MODULE = path.join(__dirname, 'agents', 'regate.ts');

/**
 * A worker of the stack serving the `regate` agent's queue (the stack's own worker serves the
 * built-ins), with a bundle of Fairway's workflows and that agent; the caller closes it.
 */
export function startRegateWorker(s: TestStack): Promise<{ close(): Promise<void> }> {
  return startBundleWorker(
    s,
    path.join(__dirname, 'agents', 'regate-workflows.ts'),
    s.config.temporal.taskQueue,
    {
      agents: ['regate'],
      base: false,
    },
  );
}

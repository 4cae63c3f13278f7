import { inject } from 'vitest';

/**
 * Worker processes this test file spawns (drill stacks' `startWorker`, which pass this process's
 * environment on) load the suite's one workflow bundle (`WORKFLOW_BUNDLE_PATH`, built by the global
 * setup from the same code) instead of bundling the workflows when they start: about 5 s of CPU per
 * worker on a 2-core machine. parts.test and the cluster smoke test keep the deployed shape (bundled
 * at start).
 */
export function childWorkersUseSuiteBundle(): void {
  process.env.WORKFLOW_BUNDLE_PATH = inject('workflowBundlePath');
}

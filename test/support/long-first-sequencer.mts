import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The storm, first in the first group (the unit files share that group's two workers, one at a time
 * while the storm runs), then the files of the integration group (integration and cluster projects,
 * one pool of workers) longest first, so that none is left to run alone at the end while the other
 * workers idle. Without a results cache (a fresh clone, CI) vitest starts larger files first, and
 * file size says little about time here: paused-worker, the longest, came 18th. The three drills
 * (each with a dev server, an API and worker processes of its own) are spread through the long files
 * so that at most two run at once, and only for a while. Seconds in the last fresh-clone `npm test`
 * (3 workers on 2 cores, so each file shares the machine), 2026-12-02; the drills as measured in one
 * file, one after another. Files not listed (each about 10 s or less) follow in vitest's order.
 */
export const LONG_FIRST = [
  'test/integration/storm.test.ts', // 88, in the first group, beside the unit files
  'test/integration/drill-chaos.test.ts', // 112
  'test/integration/paused-worker.test.ts', // 128, most of it waiting on a paused worker and timeouts
  'test/integration/scheduler-loss.test.ts', // 83
  'test/integration/continue-as-new.test.ts', // 53
  'test/integration/drill-deploy-across-chains.test.ts', // 85
  'test/integration/fairness.test.ts', // 47
  'test/integration/backpressure.test.ts', // 41
  'test/integration/drill-deploy.test.ts', // 72
  'test/integration/budget-cap.test.ts', // 34
  'test/integration/parts.test.ts', // 31
  'test/cluster/cluster-smoke.test.ts', // 31
  'test/integration/gates-batches.test.ts', // 29
  'test/integration/flood.test.ts', // 28
  'test/integration/batch-parts-crash.test.ts', // 26
  'test/integration/events.test.ts', // 24
  'test/integration/charge-crash.test.ts', // 23
  'test/e2e/quiet-logs.test.ts', // 20
  'test/e2e/cli-package.test.ts', // 19
  'test/e2e/cli.test.ts', // 18
  'test/integration/batch-parts.test.ts', // 17
  'test/integration/unstarted-run.test.ts', // 16
  'test/integration/model-call.test.ts', // 16
  'test/integration/big-estimate.test.ts', // 14
  'test/integration/priority-execution.test.ts', // 13
  'test/integration/drain-survives-loss.test.ts', // 12
  'test/e2e/console.test.ts', // 12
];

/** Vitest's order (groups as configured), with the known long files of a group first, whatever their project. */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? LONG_FIRST.length : i;
    };
    const order = new Map(sorted.map((f, i) => [f, i]));
    return [...sorted].sort((a, b) => rank(a) - rank(b) || order.get(a)! - order.get(b)!);
  }
}

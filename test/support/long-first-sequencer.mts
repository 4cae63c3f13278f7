import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The storm, first in the first group (the unit files share that group's two workers, one at a time
 * while the storm runs), then the files of the integration group (integration and cluster projects,
 * one pool of workers) longest first, so that none is left to run alone at the end while the other
 * workers idle. Without a results cache (a fresh clone, CI) vitest starts larger files first, and
 * file size says little about time here. The three drills (drill-deploy, drill-chaos,
 * scheduler-loss: each with a dev server, an API and worker processes of its own) fall so that at
 * most two run at once: scheduler-loss starts only after three files have ended, by when the chaos
 * drill has. Seconds in the last fresh-clone `npm test` (3 workers on 2 cores, so each file shares
 * the machine), 2026-12-02; "alone" figures are the file run by itself on a loaded machine (load
 * 7-14) on 2026-12-02, before and after its waits were cut. Files not listed (each under 17 s)
 * follow in vitest's order.
 */
export const LONG_FIRST = [
  'test/integration/storm.test.ts', // 89, in the first group, beside the unit files
  'test/integration/drill-deploy.test.ts', // 79; alone 100 -> 86, its dev server in memory (CPU 57 -> 36 s)
  'test/integration/own-worker.test.ts', // 67, most of it the killed worker's 30-s heartbeat timeout (alone 54)
  'test/integration/drill-chaos.test.ts', // 64; alone 80 at 67 CPU-s (CPU-bound)
  'test/integration/paused-worker.test.ts', // 80 with a 50-s pause; alone 65 -> 38 (25-s pause, the suite's bundle)
  'test/integration/user-agents.test.ts', // 45; alone 45 at 25 CPU-s, 34 of it the 4.5-MiB call
  'test/integration/scheduler-loss.test.ts', // 58 (alone 69 at 46 CPU-s), after user-agents
  'test/integration/backpressure.test.ts', // 43
  'test/integration/continue-as-new.test.ts', // 41; alone 34 at 44 CPU-s (CPU-bound)
  'test/integration/budget-cap.test.ts', // 33
  'test/integration/gates-batches.test.ts', // 32
  'test/integration/parts.test.ts', // 32
  'test/integration/fairness.test.ts', // 31
  'test/cluster/cluster-smoke.test.ts', // 25
  'test/integration/batch-parts-crash.test.ts', // 24
  'test/e2e/example.test.ts', // 23
  'test/e2e/quiet-logs.test.ts', // 22
  'test/integration/charge-crash.test.ts', // 20
  'test/integration/events.test.ts', // 20
  'test/integration/hygiene.test.ts', // 19
  'test/integration/flood.test.ts', // 19
  'test/integration/drain.test.ts', // 19
  'test/e2e/cli-package.test.ts', // 18
  'test/integration/agents-approvals.test.ts', // 18
  'test/integration/unstarted-run.test.ts', // 17
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

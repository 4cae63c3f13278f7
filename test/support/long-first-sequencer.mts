import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The storm, first in the first group (the unit files share that group's two workers, one at a time
 * while the storm runs), then the files of the integration group (integration and cluster projects,
 * one pool of workers) that take longest, longest first, so that none is left to run alone at the end while the other
 * workers idle (without a results cache, on a fresh clone and in CI, vitest starts larger files
 * first, and these are small files). Seconds alone on a 2-core machine with one other file beside
 * it (`npm test` prints each file's duration), measured 2026-12-01. The cluster test (about 17 s, most of it starting
 * PostgreSQL and four Temporal services) goes after the long files. Files not listed (each under
 * 20 s) follow in vitest's order.
 */
const LONG_FIRST = [
  'test/integration/storm.test.ts', // 88, in the first group, beside the unit files
  'test/integration/drills.test.ts', // 91
  'test/integration/fairness.test.ts', // 59
  'test/integration/scheduler-loss.test.ts', // 58
  'test/integration/backpressure.test.ts', // 53
  'test/integration/flood.test.ts', // 46
  'test/integration/continue-as-new.test.ts', // 86 with 20 slots and rounds of 50; about 35 now
  'test/integration/batch-parts.test.ts', // 34
  'test/integration/parts.test.ts', // 25
  'test/integration/gates-batches.test.ts', // 24
  'test/integration/charge-crash.test.ts', // 24
  'test/integration/batch-parts-crash.test.ts', // 23
  'test/cluster/cluster-smoke.test.ts', // 17
  'test/e2e/cli.test.ts', // 19
  'test/integration/events.test.ts', // 19
  'test/integration/priority-execution.test.ts', // 18
  'test/integration/ledger.test.ts', // 15
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

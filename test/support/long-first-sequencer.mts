import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The integration files that take longest on a 2-core machine, longest first (measured in one run
 * of the whole suite; `npm test` prints each file's duration). Without a results cache (a fresh
 * clone, CI) vitest starts larger files first, and these are small files: started last, they ran
 * alone at the end of the run for minutes while the other worker was idle. Files not listed follow
 * in vitest's order.
 */
const LONG_FIRST = [
  'test/integration/drills.test.ts',
  'test/integration/continue-as-new.test.ts',
  'test/integration/parts.test.ts',
  'test/integration/backpressure.test.ts',
  'test/integration/fairness.test.ts',
  'test/integration/flood.test.ts',
  'test/e2e/cli.test.ts',
  'test/integration/gates-batches.test.ts',
  'test/integration/priority-execution.test.ts',
  'test/integration/budget-cap.test.ts',
  'test/integration/scheduler-loss.test.ts',
  'test/integration/events.test.ts',
  'test/integration/ledger.test.ts',
];

/** Vitest's order (projects and groups as configured), with the known long files of a project first. */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? LONG_FIRST.length : i;
    };
    const order = new Map(sorted.map((f, i) => [f, i]));
    return [...sorted].sort((a, b) => {
      // Groups and projects keep the base order; within one project, known long files go first.
      if (a.project !== b.project) return order.get(a)! - order.get(b)!;
      return rank(a) - rank(b) || order.get(a)! - order.get(b)!;
    });
  }
}

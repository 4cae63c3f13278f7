import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The integration files that take longest on a 2-core machine, longest first (measured in one run
 * of the integration project, 2026-12-01, at a load average of 11-15: about twice a quiet machine's
 * figures, but the order is what counts; `npm test` prints each file's duration; seconds). Without a results cache (a fresh clone, CI) vitest starts larger
 * files first, and these are small files: started last, they ran alone at the end of the run for
 * minutes while the other worker was idle. Files not listed (each under 20 s) follow in vitest's
 * order. budget-cap (94) and governor-faults (64) took about 10 s each alone after the quiet-floor
 * follow-up (a first start held their budgeted tenants for a minute) and are no longer listed.
 */
const LONG_FIRST = [
  'test/integration/continue-as-new.test.ts', // 177
  'test/integration/drills.test.ts', // 151
  'test/integration/fairness.test.ts', // 121
  'test/integration/flood.test.ts', // 115
  'test/integration/backpressure.test.ts', // 94
  'test/integration/batch-parts.test.ts', // 79
  'test/e2e/cli.test.ts', // 75
  'test/integration/gates-batches.test.ts', // 55
  'test/integration/scheduler-loss.test.ts', // 53
  'test/integration/parts.test.ts', // 45
  'test/integration/priority-execution.test.ts', // 44
  'test/integration/ledger.test.ts', // 31
  'test/integration/batch-parts-crash.test.ts', // about 30 (new on main, not in that run)
  'test/integration/events.test.ts', // 88 then; 22 alone at low load since the quiet-floor follow-up
  'test/integration/drain.test.ts', // 28
  'test/e2e/console.test.ts', // 20
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

import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The storm, first in the first group (the unit files share that group's two workers, one at a time
 * while the storm runs), then the files of the integration group (integration and cluster projects,
 * one pool of workers) longest first, so that none is left to run alone at the end while the other
 * workers idle. Without a results cache (a fresh clone, CI) vitest starts larger files first, and
 * file size says little about time here. The three drills (drill-deploy, drill-chaos,
 * scheduler-loss: each with a dev server, an API and worker processes of its own) fall so that at
 * most two run at once: scheduler-loss starts only after five files have ended, by when the other two
 * drills have at these durations. Seconds per file in a full `npm test` on 2026-12-03 (3 workers
 * on 2 cores, beside other work: load 10-13). Files not listed (each under 17 s) follow in vitest's
 * order.
 */
export const LONG_FIRST = [
  'test/integration/storm.test.ts', // 90, in the first group, beside the unit files
  'test/integration/drill-deploy.test.ts', // 97
  'test/integration/agent-model-ledger.test.ts', // 140
  'test/integration/drill-chaos.test.ts', // 113
  'test/integration/continue-as-new.test.ts', // 103
  'test/integration/own-worker.test.ts', // 98, most of it a killed worker's 30-s heartbeat timeout
  'test/e2e/example.test.ts', // 95
  'test/e2e/readme-agent.test.ts', // 91
  'test/integration/scheduler-loss.test.ts', // 84
  'test/integration/flood.test.ts', // 85
  'test/integration/fairness.test.ts', // 79
  'test/e2e/quiet-logs.test.ts', // 73
  'test/integration/budget-cap.test.ts', // 71
  'test/integration/gates-batches.test.ts', // 65
  'test/integration/backpressure.test.ts', // 62
  'test/integration/batch-parts-crash.test.ts', // 54
  'test/e2e/cli.test.ts', // 50
  'test/integration/parts.test.ts', // 50
  'test/integration/drain.test.ts', // 47
  'test/integration/priority-execution.test.ts', // 40
  'test/integration/charge-crash.test.ts', // 39
  'test/integration/paused-worker.test.ts', // 35
  'test/integration/wait-bound.test.ts', // 34
  'test/integration/events.test.ts', // 33
  'test/e2e/cli-package.test.ts', // 31
  'test/integration/hygiene.test.ts', // 31
  'test/integration/ledger.test.ts', // 30
  'test/integration/batch-parts.test.ts', // 29
  'test/integration/user-agents.test.ts', // 28
  'test/integration/governor-faults.test.ts', // 23
  'test/integration/agents-approvals.test.ts', // 23
  'test/integration/model-call.test.ts', // 22
  'test/e2e/console.test.ts', // 21
  'test/integration/front-door-probe.test.ts', // 19
  'test/e2e/console-ops.test.ts', // 19
  'test/integration/drain-survives-loss.test.ts', // 18
  'test/integration/key-breaker.test.ts', // 17 alone
  'test/integration/lost-step-task.test.ts', // 16 alone
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

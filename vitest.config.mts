import { defineConfig } from 'vitest/config';
import { ClosingLineReporter } from './test/support/closing-line-reporter.mjs';
import { LongFirstSequencer } from './test/support/long-first-sequencer.mjs';

/** Workers of the first group: the storm and, beside it, the unit files one at a time. */
const GROUP_0_WORKERS = 2;
/** Workers of the group that runs the integration and cluster projects together. */
const INTEGRATION_WORKERS = 3;

export default defineConfig({
  test: {
    // Vitest's own output, then one plain closing line that CI reads (see the reporter).
    reporters: ['default', new ClosingLineReporter()],
    // Known long integration files start first, so they do not run alone at the end.
    sequence: { sequencer: LongFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          pool: 'threads',
          // Two workers, shared with the storm (the storm project, same group; vitest wants one count per
          // group). The storm goes first (LongFirstSequencer), so the unit files run one at a time
          // beside it until it ends. On every core with nothing beside them, the unit files kept 2 cores
          // about 55% busy for 45 s, and the storm then ran 88 s alone at the end with one core idle.
          maxWorkers: GROUP_0_WORKERS,
          // The unit files share a worker's module cache: each file importing the SDK, zod and the core
          // again cost 50-65 s of the phase's import time (18 s shared). They hold no module state of
          // their own between files (no vi.mock, no stubbed globals; spies are on per-test objects).
          isolate: false,
          testTimeout: 30_000,
        },
      },
      // Then one group of three workers: the integration files (on one shared dev server) and the
      // cluster smoke test, the long files first (LongFirstSequencer).
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          exclude: ['test/integration/storm.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          sequence: { groupOrder: 1 },
          pool: 'forks',
          maxWorkers: INTEGRATION_WORKERS,
          testTimeout: 480_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          // `npm run cluster`'s shape end to end (skipped unless the Temporal server is built in .tools/).
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          pool: 'forks',
          maxWorkers: INTEGRATION_WORKERS,
          testTimeout: 600_000,
          hookTimeout: 900_000,
        },
      },
      {
        test: {
          // The storm measures throughput against a quota over time, on a dev server of its own, first,
          // beside the unit files (one worker) and not beside the integration files: run first beside
          // two of them it passed 4 times in 5 and once missed its recovery figure (never back to 90%
          // of the quota within 25 s: the scheduler's status took 8-11 s on the starved machine).
          name: 'storm',
          include: ['test/integration/storm.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          sequence: { groupOrder: 0 },
          pool: 'forks',
          maxWorkers: GROUP_0_WORKERS,
          testTimeout: 480_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});

import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { ClosingLineReporter } from './test/support/closing-line-reporter.mjs';
import { LongFirstSequencer } from './test/support/long-first-sequencer.mjs';

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
          // Alone in its group (nothing else runs meanwhile): every core. Vitest's default, cores - 1,
          // ran the unit files one at a time on a 2-core machine.
          maxWorkers: Math.max(2, availableParallelism()),
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          exclude: ['test/integration/storm.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          sequence: { groupOrder: 1 },
          pool: 'forks',
          // One Temporal dev server per test run, shared by two files at a time: most of these tests
          // wait on timers, leases and step durations rather than on CPU, so two overlap well.
          maxWorkers: 2,
          testTimeout: 480_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          // `npm run cluster`'s shape end to end (skipped unless the Temporal server is built in .tools/).
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          sequence: { groupOrder: 3 },
          pool: 'forks',
          maxWorkers: 1,
          testTimeout: 600_000,
          hookTimeout: 900_000,
        },
      },
      {
        test: {
          // The storm measures throughput against a quota over time: it runs last and alone, so a
          // neighbour's load does not decide its recovery figures.
          name: 'storm',
          include: ['test/integration/storm.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          sequence: { groupOrder: 2 },
          pool: 'forks',
          maxWorkers: 1,
          testTimeout: 480_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});

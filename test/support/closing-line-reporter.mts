import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `Tests: N passed, N failed, N skipped`, without colour codes.
 * CI reads a run's closing line to tell a run that tested something from one that tested nothing,
 * and it does not read vitest's coloured summary; people can read this line too.
 */
export class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed on its own (it did not load, or a beforeAll hook threw and its tests were
      // skipped) counts as one failure.
      if (module.state() === 'failed' && ![...module.children.allTests('failed')].length) failed += 1;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

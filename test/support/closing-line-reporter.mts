import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { OPT_IN_TESTS } from './opt-in.mjs';

/**
 * Ends the run with one plain line, `Tests: N passed, N failed, N skipped`, without colour codes.
 * CI reads a run's closing line to tell a run that tested something from one that tested nothing,
 * and it does not read vitest's coloured summary; people can read this line too.
 *
 * With CI set, a skipped test outside the opt-in list (`opt-in.mts`) fails the run: it is named,
 * counted as a failure on the closing line, and the exit code is 1.
 */
export class ClosingLineReporter implements Reporter {
  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const line = closingLine(testModules, unhandledErrors.length, Boolean(this.env.CI));
    for (const name of line.notOptIn)
      process.stdout.write(`\nskipped in CI, and not an opt-in test: ${name}`);
    if (line.notOptIn.length) process.exitCode = 1;
    process.stdout.write(`\n${line.text}\n`);
  }
}

/** The closing line's figures; with `ci`, the skipped tests outside the opt-in list are failures. */
export function closingLine(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: number,
  ci: boolean,
): { text: string; notOptIn: string[] } {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const notOptIn: string[] = [];
  const optIn = new Set(OPT_IN_TESTS.map((t) => t.file));
  for (const module of testModules) {
    const file = module.relativeModuleId.split(path.sep).join('/');
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') passed += 1;
      else if (state === 'failed') failed += 1;
      else {
        skipped += 1;
        if (ci && !optIn.has(file)) notOptIn.push(`${file} > ${test.fullName}`);
      }
    }
    // A file that failed on its own (it did not load, or a beforeAll hook threw and its tests were
    // skipped) counts as one failure.
    if (module.state() === 'failed' && ![...module.children.allTests('failed')].length) failed += 1;
  }
  failed += unhandledErrors + notOptIn.length;
  return { text: `Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`, notOptIn };
}

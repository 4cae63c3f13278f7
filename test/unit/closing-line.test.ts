import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import { closingLine } from '../support/closing-line-reporter.mjs';
import { OPT_IN_TESTS } from '../support/opt-in.mjs';

/** A test module as the reporter reads it: its path and its tests' states. */
function fakeModule(file: string, states: string[]): TestModule {
  const tests = states.map((state, i) => ({ fullName: `case ${i}`, result: () => ({ state }) }));
  return {
    relativeModuleId: file,
    state: () => (states.includes('failed') ? 'failed' : 'passed'),
    children: { allTests: (only?: string) => tests.filter((t) => !only || t.result().state === only) },
  } as unknown as TestModule;
}

describe('the closing line', () => {
  const optIn = OPT_IN_TESTS[0]!.file;
  const modules = [
    fakeModule('test/unit/a.test.ts', ['passed', 'passed', 'skipped']),
    fakeModule(optIn, ['skipped', 'skipped']),
    fakeModule('test/unit/b.test.ts', ['passed', 'failed']),
  ];

  it('counts passed, failed and skipped tests', () => {
    expect(closingLine(modules, 0, false)).toEqual({
      text: 'Tests: 3 passed, 1 failed, 3 skipped',
      notOptIn: [],
    });
  });

  it('with CI set, fails each skipped test outside the opt-in list, and names it', () => {
    expect(closingLine(modules, 1, true)).toEqual({
      text: 'Tests: 3 passed, 3 failed, 3 skipped',
      notOptIn: ['test/unit/a.test.ts > case 2'],
    });
  });
});

describe('the opt-in list', () => {
  it('is documented: docs/testing.md names each opt-in test and what runs it', () => {
    const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'testing.md'), 'utf8');
    for (const t of OPT_IN_TESTS) {
      const row = doc.split('\n').find((l) => l.includes(`\`${t.file}\``));
      expect(row, t.file).toBeDefined();
      for (const v of t.enabledBy.split(', ')) expect(row, `${t.file}: ${v}`).toContain(`\`${v}\``);
    }
  });
});

import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONG_FIRST } from '../support/long-first-sequencer.mjs';

const root = path.join(__dirname, '..', '..');

describe("the suite's long-first order", () => {
  it('names only test files that exist, each once (a renamed file would fall back to the end)', () => {
    expect(LONG_FIRST.filter((f) => !existsSync(path.join(root, f)))).toEqual([]);
    expect(new Set(LONG_FIRST).size).toBe(LONG_FIRST.length);
  });
});

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../../bench/lib/report-files';
import { RESULTS_DIR, resultsDir } from '../../../bench/lib/results';

const root = path.resolve(__dirname, '../../..');

/** True when `commit` is in HEAD's history (a shallow clone may lack old ones: then unknown). */
function commitExists(commit: string): boolean | 'unknown' {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, 'HEAD'], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    const shallow = execFileSync('git', ['rev-parse', '--is-shallow-repository'], {
      cwd: root,
      encoding: 'utf8',
    });
    return shallow.trim() === 'true' ? 'unknown' : false;
  }
}

describe('committed benchmark results', () => {
  const results = readResults();

  it('exist', () => {
    expect(results.length).toBeGreaterThan(5);
  });

  it.each(results.map((r) => [r.scenario, r] as const))(
    '%s was measured on a clean, committed tree',
    (_, r) => {
      expect(r.provenance.dirty).toBe(false);
      expect(r.provenance.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(commitExists(r.provenance.commit)).not.toBe(false);
    },
  );
});

describe('resultsDir', () => {
  it('is the committed folder unless BENCH_RESULTS_DIR names another', () => {
    expect(resultsDir({})).toBe(RESULTS_DIR);
    expect(resultsDir({ BENCH_RESULTS_DIR: '/tmp/scratch' })).toBe('/tmp/scratch');
  });
});

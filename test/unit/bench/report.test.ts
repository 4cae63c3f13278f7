import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BEGIN, END, renderTable, spliceTable } from '../../../bench/lib/report';
import { BENCHMARKS, generatePage, readResults } from '../../../bench/lib/report-files';
import { commandLine } from '../../../bench/lib/results';
import type { BenchResult } from '../../../bench/lib/results';

const fixture = JSON.parse(
  readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'bench', 'throughput.json'), 'utf8'),
) as BenchResult;

describe('bench:report', () => {
  it('renders a result file into its row: headline figures, the command, when and on which commit', () => {
    const table = renderTable([fixture]);
    const row = table.split('\n').find((l) => l.startsWith('| Throughput vs. direct start'));
    expect(row).toBe(
      '| Throughput vs. direct start | `npm run bench -- throughput --runs 100 --warmup 20 --sample 50` | ' +
        '100 runs per path, concurrency 50: direct start **23.2 runs/s**, scheduler path **12.8 runs/s**, ratio **0.55**; ' +
        'submit→admit p50/p99 1,378/2,189 ms (direct 123/423 ms); history events per run 13.0 direct vs 13.8 + 1.6 in the scheduler; ' +
        'workflow tasks per run 1.0 vs 1.3 + 0.2 in the scheduler | ' +
        '2026-11-30 13:31 UTC, `a1e600e73c` (dirty); 2 cores, 23.5 GiB, load 19.1→16.3; Temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1) |',
    );
    // A scenario without a committed result says so rather than showing an old figure.
    expect(table).toContain(
      '| Quota storm | `npm run bench -- storm` | not measured with provenance yet | — |',
    );
  });

  it('renders the cluster row from the comparison, and from an older file of the batch measure', () => {
    const comparison = {
      ...structuredClone(fixture),
      scenario: 'throughput-cluster',
      command: 'npm run bench -- throughput --cluster --runs 100',
      data: { target: 'cluster', apis: 2, workers: 2, directProcesses: 2, ...(fixture.data as object) },
    };
    const row = (r: BenchResult) =>
      renderTable([r])
        .split('\n')
        .find((l) => l.startsWith('| Throughput, cluster'));
    expect(row(comparison)).toContain(
      '| on the cluster (`npm run cluster`: 2 APIs and 2 workers; the direct path 2 processes of front door and worker): ' +
        '100 runs per path, concurrency 50: direct start **23.2 runs/s**, scheduler path **12.8 runs/s**, ratio **0.55**;',
    );
    const batches = {
      ...comparison,
      data: { units: 2000, concurrency: 50, seconds: 52.2, admissionsPerSecond: 38.31 },
    };
    expect(row(batches)).toContain(
      '| 2,000 runs on the cluster (`npm run cluster`), concurrency 50: 52 s, 38.3 admissions/s end to end |',
    );
  });

  it('is deterministic: the same files in any order give the same table', () => {
    const other = { ...fixture, scenario: 'zz-extra', command: 'npm run bench -- zz-extra' };
    expect(renderTable([other, fixture])).toBe(renderTable([fixture, other]));
    expect(renderTable([fixture])).toBe(renderTable([structuredClone(fixture)]));
  });

  it('replaces only what lies between the markers, and refuses a page without them', () => {
    const readme = `# T\n\nbefore\n\n${BEGIN}\n\nold | table\n\n${END}\n\nafter\n`;
    expect(spliceTable(readme, 'NEW')).toBe(`# T\n\nbefore\n\n${BEGIN}\n\nNEW\n\n${END}\n\nafter\n`);
    expect(() => spliceTable('# no markers\n', 'NEW')).toThrow(/markers/);
  });

  it('records the command as a person reruns it', () => {
    const argv = ['node', '/repo/bench/index.ts', 'throughput', '--runs', '5'];
    expect(commandLine(argv, 'bench')).toBe('npm run bench -- throughput --runs 5');
    expect(commandLine(['node', '/repo/bench/index.ts'], 'bench:report')).toBe('npm run bench:report');
  });

  it("docs/benchmarks.md's figures are exactly what the generator makes of the committed bench/results/ (no hand edits)", async () => {
    const page = readFileSync(BENCHMARKS, 'utf8');
    expect(page).toBe(await generatePage(page, readResults()));
  });
});

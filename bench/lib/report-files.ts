import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { renderTable, spliceTable } from './report';
import type { BenchResult } from './results';
import { RESULTS_DIR } from './results';

/** The page that holds the generated figures table. */
export const BENCHMARKS = path.join(__dirname, '..', '..', 'docs', 'benchmarks.md');

/** The committed results that carry provenance (older files without it are not reported). */
export function readResults(dir = RESULTS_DIR): BenchResult[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as BenchResult)
    .filter((r) => typeof r.scenario === 'string' && r.provenance !== undefined);
}

/** docs/benchmarks.md as `npm run bench:report` writes it: the table spliced in, formatted as `npm run lint` wants. */
export async function generatePage(page: string, results: BenchResult[]): Promise<string> {
  const options = (await resolveConfig(BENCHMARKS)) ?? {};
  return format(spliceTable(page, renderTable(results)), { ...options, filepath: BENCHMARKS });
}

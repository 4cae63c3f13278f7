import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { renderTable, spliceTable } from './report';
import type { BenchResult } from './results';
import { RESULTS_DIR } from './results';

export const README = path.join(__dirname, '..', '..', 'README.md');

/** The committed results that carry provenance (older files without it are not reported). */
export function readResults(dir = RESULTS_DIR): BenchResult[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as BenchResult)
    .filter((r) => typeof r.scenario === 'string' && r.provenance !== undefined);
}

/** The README as `npm run bench:report` writes it: the table spliced in, formatted as `npm run lint` wants. */
export async function generateReadme(readme: string, results: BenchResult[]): Promise<string> {
  const options = (await resolveConfig(README)) ?? {};
  return format(spliceTable(readme, renderTable(results)), { ...options, filepath: README });
}

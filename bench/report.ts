import { readFileSync, writeFileSync } from 'node:fs';
import { BENCHMARKS, generatePage, readResults } from './lib/report-files';

/** `npm run bench:report`: regenerates the figures table in docs/benchmarks.md from the committed bench/results/. */
async function main(): Promise<void> {
  const results = readResults();
  writeFileSync(BENCHMARKS, await generatePage(readFileSync(BENCHMARKS, 'utf8'), results));
  console.log(`docs/benchmarks.md: figures of ${results.map((r) => r.scenario).join(', ') || 'no scenario'}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

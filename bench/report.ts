import { readFileSync, writeFileSync } from 'node:fs';
import { README, generateReadme, readResults } from './lib/report-files';

/** `npm run bench:report`: regenerates the README's figures table from the committed bench/results/. */
async function main(): Promise<void> {
  const results = readResults();
  writeFileSync(README, await generateReadme(readFileSync(README, 'utf8'), results));
  console.log(`README.md: figures of ${results.map((r) => r.scenario).join(', ') || 'no scenario'}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

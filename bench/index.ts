import { runFloodBench } from './flood';
import { runSim } from './sim';
import { runStormBench } from './storm';
import { runThroughput } from './throughput';
import { runThroughputVsDirect } from './throughput-vs-direct';

/** `npm run bench -- <scenario> [--flag value …]`. */
const scenarios: Record<string, (argv: string[]) => Promise<void>> = {
  sim: runSim,
  flood: runFloodBench,
  storm: runStormBench,
  throughput: runThroughputVsDirect,
  // The older scheduler-only measure: batches through the API, admissions per second end to end.
  'throughput-batches': runThroughput,
};

async function main(): Promise<void> {
  const [name = '', ...argv] = process.argv.slice(2);
  const run = scenarios[name];
  if (!run) {
    console.error(`usage: npm run bench -- <${Object.keys(scenarios).join('|')}> [--flag value …]`);
    process.exit(2);
  }
  await run(argv);
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

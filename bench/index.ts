import { runBystanderBench } from './bystander';
import { runFloodBench } from './flood';
import { runKeysBench } from './keys';
import { runOverloadBench } from './overload';
import { runPriorityBench } from './priority';
import { runReportsBench } from './reports';
import { runSim } from './sim';
import { runStormBench } from './storm';
import { runStormColdBench } from './storm-cold';
import { runThroughput } from './throughput';
import { runThroughputVsDirect } from './throughput-vs-direct';

/** `npm run bench -- <scenario> [--flag value …]`. */
const scenarios: Record<string, (argv: string[]) => Promise<void>> = {
  priority: runPriorityBench,
  sim: runSim,
  flood: runFloodBench,
  storm: (argv) =>
    argv.includes('--cold') ? runStormColdBench(argv.filter((a) => a !== '--cold')) : runStormBench(argv),
  'storm-cold': runStormColdBench,
  bystander: runBystanderBench,
  overload: runOverloadBench,
  // Fairness keys inside a tenant at full size, at the simulator's first model calls (issue 47).
  keys: runKeysBench,
  // Worker reports by update and by pull, at 2 and 64 workers (issue 46).
  reports: runReportsBench,
  // Direct start beside the scheduler path, on one dev server or (`--cluster`) on the cluster.
  throughput: runThroughputVsDirect,
  // The older scheduler-only measure: batches through the API (`--cluster`: the cluster's two), admissions per second end to end.
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

import { flags, writeResult } from './lib/bench-stack';
import { createProgress } from './lib/progress';
import { CLUSTER_TEMPORAL } from './lib/cluster-drill-stack';
import { answersLine, ledgerLine, runDrillMain } from './lib/drill-stack';
import { runDeployDrill } from './scenarios/drill-deploy';
import { runClusterDeployDrill } from './scenarios/drill-deploy-cluster';

/**
 * `npm run drill:deploy [-- --units 1000 --concurrency 50 --steps 3 --stepMs 250] [--terminate]`: the
 * deploy drill; `--terminate` upgrades as across a change that is not replay-safe (the scheduler is
 * terminated between the workers, CONTRIBUTING.md).
 */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--cluster')) return cluster(argv.filter((a) => a !== '--cluster'));
  const terminateScheduler = argv.includes('--terminate');
  const f = flags(
    argv.filter((a) => a !== '--terminate'),
    { units: 1000, concurrency: 50, steps: 3, stepMs: 250 },
  );
  const bar = createProgress('deploy drill', f.units, { unit: 'units' });
  const r = await runDeployDrill({
    ...f,
    terminateScheduler,
    timeoutMs: 600_000,
    log: (m) => bar.log(`· ${m}`),
    onStatus: (st) => bar.update(st.counters.completed, `in flight ${st.inFlight}, ${st.mode}`),
  });
  bar.finish();
  console.log(
    `deploy drill: ${r.units} units and ${r.events.runs} event runs (${r.events.answered} of ${r.events.sent} events answered 2xx) → lost ${r.lost}, duplicated ${r.duplicated} ` +
      `(effect duplicates ${r.effects.duplicates}, admitted ${r.counters.admitted}); ` +
      `drain ${(r.drainMs / 1000).toFixed(2)} s with ${r.atDrain.inFlight} in flight, ` +
      `${r.admissionsDuringDrain} admissions while draining, refuse → ${r.refused.status} ${r.refused.code} Retry-After ${r.refused.retryAfter}; ` +
      `v1 SIGTERM exit ${r.workerExit} in ${r.workerStopMs} ms, ` +
      (r.newChainMs === undefined ? '' : `scheduler terminated, new chain in ${r.newChainMs} ms, `) +
      `v2 ready in ${(r.workerStartMs / 1000).toFixed(1)} s; ` +
      `time to resume ${r.timeToResumeMs} ms (first completion ${r.timeToFirstCompletionMs} ms); ${ledgerLine(r.ledger)}; ` +
      `${r.seconds.toFixed(0)} s in all → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
  );
  console.log(`wrote ${writeResult(terminateScheduler ? 'drill-deploy-terminate' : 'drill-deploy', r)}`);
  process.exit(r.pass ? 0 : 1);
}

/** `npm run drill:deploy -- --cluster`: a rolling deploy of the cluster's two workers. */
async function cluster(argv: string[]): Promise<void> {
  const f = flags(argv, { units: 1000, concurrency: 50, steps: 3, stepMs: 250 });
  const r = await runClusterDeployDrill({ ...f, timeoutMs: 900_000, log: (m) => console.log(`· ${m}`) });
  const steps = r.steps
    .map(
      (x) =>
        `${x.worker}: drain ${(x.drainMs / 1000).toFixed(1)} s (${x.inFlightAtDrain} in flight), ` +
        `${x.acceptedDuringDeploy} submissions accepted meanwhile, SIGTERM → exit ${x.workerExit} in ${(x.workerStopMs / 1000).toFixed(1)} s, ` +
        `v2 ready ${(x.workerStartMs / 1000).toFixed(1)} s, resume ${x.timeToResumeMs} ms, fleet held ${(x.pauseMs / 1000).toFixed(1)} s`,
    )
    .join('; ');
  console.log(
    `cluster deploy drill: ${r.units} units through 2 APIs (answers ${answersLine(r.answers)}) → lost ${r.lost}, duplicated ${r.duplicated}; ` +
      `sink: ${r.sink.deliveries} deliveries, ${r.sink.distinctKeys} distinct keys, ${r.sink.duplicatedKeys} delivered more than once; ` +
      `${ledgerLine(r.ledger)}; ${steps}; ${r.seconds.toFixed(0)} s in all → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
  );
  console.log(`wrote ${writeResult('drill-deploy-cluster', r, { temporal: CLUSTER_TEMPORAL })}`);
  process.exit(r.pass ? 0 : 1);
}

runDrillMain(main);

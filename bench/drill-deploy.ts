import { flags, writeResult } from './lib/bench-stack';
import { createProgress } from './lib/progress';
import { stopAllDrillStacks } from './lib/drill-stack';
import { runDeployDrill } from './scenarios/drill-deploy';

/** `npm run drill:deploy [-- --units 1000 --concurrency 50 --steps 3 --stepMs 250]`: issue 6's deploy drill. */
async function main(): Promise<void> {
  const f = flags(process.argv.slice(2), { units: 1000, concurrency: 50, steps: 3, stepMs: 250 });
  const bar = createProgress('deploy drill', f.units, { unit: 'units' });
  const r = await runDeployDrill({
    ...f,
    timeoutMs: 600_000,
    log: (m) => bar.log(`· ${m}`),
    onStatus: (st) => bar.update(st.counters.completed, `in flight ${st.inFlight}, ${st.mode}`),
  });
  bar.finish();
  console.log(
    `deploy drill: ${r.units} units → lost ${r.lost}, duplicated ${r.duplicated} ` +
      `(effect duplicates ${r.effects.duplicates}, admitted ${r.counters.admitted}); ` +
      `drain ${(r.drainMs / 1000).toFixed(2)} s with ${r.atDrain.inFlight} in flight, ` +
      `${r.admissionsDuringDrain} admissions while draining, refuse → ${r.refused.status} ${r.refused.code} Retry-After ${r.refused.retryAfter}; ` +
      `v1 SIGTERM exit ${r.workerExit} in ${r.workerStopMs} ms, v2 ready in ${(r.workerStartMs / 1000).toFixed(1)} s; ` +
      `time to resume ${r.timeToResumeMs} ms (first completion ${r.timeToFirstCompletionMs} ms); ` +
      `${r.seconds.toFixed(0)} s in all → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
  );
  console.log(`wrote ${writeResult('drill-deploy', r)}`);
  process.exit(r.pass ? 0 : 1);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void stopAllDrillStacks().finally(() => process.exit(130)));
main().catch((err: unknown) => {
  console.error(err);
  void stopAllDrillStacks().finally(() => process.exit(1));
});

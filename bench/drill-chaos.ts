import { flags, writeResult } from './lib/bench-stack';
import { createProgress } from './lib/progress';
import { CLUSTER_TEMPORAL } from './lib/cluster-drill-stack';
import { answersLine, ledgerLine, runDrillMain } from './lib/drill-stack';
import { runChaosDrill } from './scenarios/drill-chaos';
import { runClusterChaosDrill } from './scenarios/drill-chaos-cluster';

/** `npm run drill:chaos [-- --units 1000 --kills 3 --seed 7 --concurrency 50 --steps 3 --stepMs 250]`: issue 6's chaos drill. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--cluster')) return cluster(argv.filter((a) => a !== '--cluster'));
  const f = flags(argv, {
    units: 1000,
    kills: 3,
    seed: Date.now() % 100_000,
    concurrency: 50,
    steps: 3,
    stepMs: 250,
  });
  const bar = createProgress('chaos drill', f.units, { unit: 'units' });
  const r = await runChaosDrill({
    ...f,
    timeoutMs: 600_000,
    log: (m) => bar.log(`· ${m}`),
    onStatus: (st) => bar.update(st.counters.completed, `in flight ${st.inFlight}, ${st.mode}`),
  });
  bar.finish();
  const faults = r.faults.map((x) => `${x.kind} ${(x.recoveryMs / 1000).toFixed(1)} s`).join(', ');
  console.log(
    `chaos drill (seed ${f.seed}): ${r.units} units → lost ${r.lost}, duplicated ${r.duplicated} ` +
      `(effect duplicates ${r.effects.duplicates}, attempts ${r.effects.attempts}, admitted ${r.counters.admitted}); ` +
      `${r.modelUnits.units} units on the user's ctx.model agent (worst cases ${r.modelUnits.worstCase.join('–')}); ` +
      `${ledgerLine(r.ledger)}; cut calls ${r.cut.calls} (worst-case surplus ${r.cut.surplus}); ` +
      `recovery after each fault: ${faults}; ${r.seconds.toFixed(0)} s in all → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
  );
  console.log(`wrote ${writeResult('drill-chaos', { seed: f.seed, ...r })}`);
  process.exit(r.pass ? 0 : 1);
}

/** `npm run drill:chaos -- --cluster`: the same on `npm run cluster`'s shape (see the scenario). */
async function cluster(argv: string[]): Promise<void> {
  const f = flags(argv, { units: 1000, seed: Date.now() % 100_000, concurrency: 50, steps: 3, stepMs: 250 });
  const r = await runClusterChaosDrill({ ...f, timeoutMs: 900_000, log: (m) => console.log(`· ${m}`) });
  const faults = r.faults.map((x) => `${x.kind} ${(x.recoveryMs / 1000).toFixed(1)} s`).join(', ');
  console.log(
    `cluster chaos drill (seed ${f.seed}): ${r.units} units through 2 APIs (answers ${answersLine(r.answers)}) → lost ${r.lost}, duplicated ${r.duplicated}; ` +
      `sink: ${r.sink.deliveries} deliveries, ${r.sink.distinctKeys} distinct keys, ${r.sink.duplicatedKeys} delivered more than once; ` +
      `${ledgerLine(r.ledger)}; recovery after each fault: ${faults}; ${r.seconds.toFixed(0)} s in all → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
  );
  console.log(
    `wrote ${writeResult('drill-chaos-cluster', { seed: f.seed, ...r }, { temporal: CLUSTER_TEMPORAL })}`,
  );
  process.exit(r.pass ? 0 : 1);
}

runDrillMain(main);

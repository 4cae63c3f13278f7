import { flags, writeResult } from './lib/bench-stack';
import { createProgress } from './lib/progress';
import { runDrillMain } from './lib/drill-stack';
import { runSchedulerLossDrill } from './scenarios/drill-scheduler-loss';

/**
 * `npm run drill:scheduler-loss [-- --units 1000 --concurrency 50 --steps 2 --stepMs 250 --seed 7
 * --burst 24 --quietSeconds 300]`: issue 9's scheduler-loss drill (terminate, API SIGKILL, reset).
 */
async function main(): Promise<void> {
  const f = flags(process.argv.slice(2), {
    units: 1000,
    concurrency: 50,
    steps: 2,
    stepMs: 250,
    seed: Date.now() % 100_000,
    burst: 24,
    quietSeconds: 300,
  });
  const bar = createProgress('scheduler-loss drill', f.units, { unit: 'units' });
  let note = '';
  const r = await runSchedulerLossDrill({
    ...f,
    quietMs: f.quietSeconds * 1000,
    timeoutMs: 1_800_000,
    log: (m) => bar.log(`· ${m}`),
    onStatus: (st) => (note = `in flight ${st.inFlight}, queued ${st.queued?.total ?? '?'}`),
    onDone: (d) => bar.update(d, note),
  });
  bar.finish();
  const rec = r.recoveries
    .map(
      (x) =>
        `${x.kind}: new chain ${(x.newChainMs / 1000).toFixed(1)} s, admitting ${(x.admittingMs / 1000).toFixed(1)} s, ` +
        `next effect ${(x.progressMs / 1000).toFixed(1)} s` +
        (x.held
          ? ` (drained with hold: ${x.held.admitted} admitted over ${x.held.reads} reads in ` +
            `${(x.held.ms / 1000).toFixed(1)} s with ${x.held.queued} held, resumed at ${(x.held.resumedMs / 1000).toFixed(1)} s)`
          : ''),
    )
    .join('; ');
  const kills = r.apiKills
    .map(
      (k) =>
        `${k.answered}/${k.sent} answered, ${k.orphans} unanswered runs, ${k.betweenStartAndSubmit} never submitted, ` +
        `${k.decidedNotStarted} admitted and never started`,
    )
    .join('; ');
  const ledgers = r.ledgers
    .map(
      (l) =>
        `${l.tenant} used ${l.used}, billed ${l.billed}, spent ${l.spent}${l.budget === null ? '' : ` of ${l.budget}`}`,
    )
    .join('; ');
  console.log(
    `scheduler-loss drill (seed ${f.seed}): ${r.runs} runs (${r.accepted} accepted, ${r.refusedByBudget} refused by budget) → ` +
      `${JSON.stringify(r.statuses)}, not terminal ${r.notTerminal.length}; ${rec}; API kills: ${kills}; ` +
      `sink ${r.sink.distinctKeys} effects, ${r.sink.duplicatedKeys} applied twice; ` +
      `simulator: ${r.calls.runsOverlapping} runs with two calls at once, ${r.calls.stepsServedTwice} steps served twice, ` +
      `at most ${r.calls.maxInFlight} calls in flight; ${ledgers}; ` +
      `${r.seconds.toFixed(0)} s in all → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
  );
  console.log(`wrote ${writeResult('drill-scheduler-loss', { seed: f.seed, ...r })}`);
  process.exit(r.pass ? 0 : 1);
}

runDrillMain(main);

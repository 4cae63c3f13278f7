import { Client, Connection } from '@temporalio/client';
import { flags, writeResult } from './lib/bench-stack';
import { startDrillStack, runDrillMain } from './lib/drill-stack';
import { runBatchParts } from './scenarios/batch-parts';

/**
 * `npm run drill:batch-parts [-- --items 10000 --partItems 150 --concurrency 64 --check 500 --complete 1 --reofferFirstSeconds 3600]`: issue 11
 * row 1 at full size on a dev server of its own, with the worker in a child process (it reads the
 * items the API stored from the shared file): a batch of maximal audit items (about 25 KB each; 10,000
 * is about 250 MB) sent in parts, every run checked to complete (`check` of them one by one).
 * `--complete 0` stops once every item's run exists (the batch workflow returned; counted in visibility).
 * Here, run it with `TMPDIR=/dev/shm`: the dev server's SQLite file lives in the drill's temporary
 * directory, and on this machine's disk the dev server ran about 60 audit runs a minute against
 * about 200 with the file in RAM (/dev/shm).
 */
async function main(): Promise<void> {
  const f = flags(process.argv.slice(2), {
    items: 10_000,
    partItems: 150,
    concurrency: 64,
    check: 500,
    complete: 1,
    reofferFirstSeconds: 3600,
  });
  // The drill is about the items' path (door, store, batch workflow, runs), not admission pacing (which
  // has its own tests and drills): the governor starts at the simulator's quota instead of ramping up
  // to it from 2M tokens a minute (an audit run reserves 25,000). The dev server keeps its state in a
  // SQLite file: in memory, it died of a SIGSEGV inside SQLite (modernc.org/sqlite in the CLI's 1.9.1)
  // after 8,946 of the 10,000 runs, at 4.2 GB resident, and took the other runs with it. A queued run
  // checks that the scheduler knows it after 5-10 min, then at ×2 up to 30 min (RUN_REOFFER_*): with
  // 9,900 runs queued behind 64 slots those checks (two workflow tasks, an activity and a timer each,
  // about 11 events) cost the dev server more than the runs it was running, and the rate fell from 2
  // to 0.5 items a second within 20 minutes. The checks recover a lost scheduler (scheduler-loss tests
  // and drill); here they start after an hour.
  const stack = await startDrillStack({
    concurrency: f.concurrency,
    env: {
      DEFAULT_TENANT_MAX_IN_FLIGHT: '1000',
      GOVERNOR_INITIAL_TPM: '100000000',
      RUN_REOFFER_FIRST_SECONDS: String(f.reofferFirstSeconds),
      RUN_REOFFER_MAX_SECONDS: String(2 * f.reofferFirstSeconds),
    },
  });
  await stack.startWorker('drill-batch-parts');
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const r = await runBatchParts(
      { call: stack.call, tenant: stack.tenant, client: new Client({ connection }) },
      {
        items: f.items,
        partItems: f.partItems,
        check: f.check,
        complete: f.complete !== 0,
        timeoutMs: 24 * 3600_000,
        pollMs: 15_000,
        stallMs: 600_000,
        log: (m) => process.stdout.write(`\r· ${m}   `),
      },
    );
    console.log(
      `\nbatch in parts: ${r.items} maximal audit items (${(r.itemBytes / 1e6).toFixed(1)} MB) in ${r.parts} parts; ` +
        `one request → ${r.oneRequestStatus}; retried part replayed ${r.retriedPart.replayed}; ` +
        `appended in ${r.appendSeconds.toFixed(0)} s, committed in ${r.commitSeconds.toFixed(1)} s, ` +
        `ran in ${r.runSeconds.toFixed(0)} s; final ${r.final.completed} completed / ${r.final.failed} failed; ` +
        `batch history ${(r.batchHistoryBytes / 1e3).toFixed(0)} kB; ${r.checked} runs checked, ${r.mismatched.length} wrong ` +
        `→ ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
    );
    console.log(`wrote ${writeResult('drill-batch-parts', r)}`);
    process.exitCode = r.pass ? 0 : 1;
  } finally {
    await connection.close();
    await stack.stop();
  }
}

runDrillMain(main);

import { Client, Connection } from '@temporalio/client';
import { flags, writeResult } from './lib/bench-stack';
import { startDrillStack, runDrillMain } from './lib/drill-stack';
import { runBatchResume } from './scenarios/batch-resume';

/**
 * `npm run drill:batch [-- --items 2000 --failEvery 20 --concurrency 20 --stepMs 100 --otherRuns 20]`:
 * issue 13's batch drill at full size on a dev server of its own (the integration test runs it smaller).
 */
async function main(): Promise<void> {
  const f = flags(process.argv.slice(2), {
    items: 2000,
    failEvery: 20,
    concurrency: 20,
    stepMs: 100,
    otherRuns: 20,
  });
  const stack = await startDrillStack({
    concurrency: f.concurrency,
    env: { DEFAULT_TENANT_MAX_IN_FLIGHT: '1000' },
  });
  await stack.startWorker('drill-batch');
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const r = await runBatchResume(
      { call: stack.call, tenant: stack.tenant, client: new Client({ connection }) },
      { ...f, timeoutMs: 1_800_000, log: (m) => process.stdout.write(`\r· ${m}   `) },
    );
    console.log(
      `\nbatch drill: ${r.items} items, ${r.failing} failing → first pass ${r.firstPass.completed} completed / ${r.firstPass.failed} failed; ` +
        `resume re-drove ${r.resumed}, re-ran ${r.reran.actual} (unexpected ${r.reran.unexpected.length}, missing ${r.reran.missing.length}); ` +
        `final ${r.final.completed} completed / ${r.final.failed} failed / ${r.final.queued} queued, progress ${r.final.progress}; ` +
        `other tenant: ${r.other.finishedWhileBatchPending} of ${r.other.submitted} runs finished while the batch was pending; ` +
        `${r.seconds.toFixed(0)} s → ${r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`}`,
    );
    console.log(`wrote ${writeResult('drill-batch', r)}`);
    process.exitCode = r.pass ? 0 : 1;
  } finally {
    await connection.close();
    await stack.stop();
  }
}

runDrillMain(main);

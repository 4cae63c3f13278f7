import { setTimeout as sleep } from 'node:timers/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '../src/fleet/worker';
import { flags, startBenchStack } from './lib/bench-stack';
import { startDirectWorker } from './lib/direct-worker';
import { chainEvents, diffCounts } from './lib/history-account';
import { writeResult } from './lib/results';
import { directPath, schedulerPath } from './lib/throughput-paths';
import type { PathResult } from './lib/throughput-paths';

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const f2 = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(2));

/** The per-run account, event type by event type, of both paths (scheduler events divided by its runs). */
function account(direct: PathResult, sched: PathResult, schedulerEvents: Record<string, number>): string[] {
  const types = [...new Set([...Object.keys(direct.events), ...Object.keys(sched.events)])].sort();
  const w = Math.max(
    40,
    ...types.map((t) => t.length),
    ...Object.keys(schedulerEvents).map((t) => t.length + 2),
  );
  const row = (name: string, a: number | undefined, b: number | undefined) =>
    `  ${name.padEnd(w)} ${f2(a).padStart(8)} ${f2(b).padStart(10)} ${f2((b ?? 0) - (a ?? 0)).padStart(8)}`;
  const lines = [
    `  ${'history events per run'.padEnd(w)} ${'direct'.padStart(8)} ${'scheduler'.padStart(10)} ${'Δ'.padStart(8)}`,
  ];
  lines.push('  run workflow:');
  for (const t of types) lines.push(row(`  ${t}`, direct.events[t], sched.events[t]));
  lines.push(row('  = run workflow', direct.eventsPerRun, sched.eventsPerRun));
  lines.push('  scheduler workflow (its events in the phase ÷ runs):');
  for (const [t, v] of Object.entries(schedulerEvents).sort()) lines.push(row(`  ${t}`, undefined, v));
  const schedTotal = Object.values(schedulerEvents).reduce((a, b) => a + b, 0);
  lines.push(row('  = scheduler workflow', 0, schedTotal));
  lines.push(row('all events per run', direct.eventsPerRun, sched.eventsPerRun + schedTotal));
  lines.push(
    row(
      'workflow tasks per run (run + scheduler)',
      direct.workflowTasksPerRun,
      sched.workflowTasksPerRun + (schedulerEvents.workflowTaskCompleted ?? 0),
    ),
  );
  return lines;
}

/**
 * `npm run bench -- throughput`: on one dev server, the same runs (the run workflow, the synthetic
 * agent's steps through the model simulator) first started directly with their admission at start
 * (no scheduler in the path), then submitted through the API and admitted by the scheduler. Both paths
 * hold `concurrency` runs in flight. Prints both rates, their ratio, submit→admit latency and the
 * history events per run, type by type.
 */
export async function runThroughputVsDirect(argv: string[]): Promise<void> {
  const f = flags(argv, {
    runs: 2000,
    concurrency: 50,
    steps: 1,
    tokensPerStep: 100,
    tenants: 4,
    warmup: 100,
    sample: 400,
    separateSignal: 0,
  });
  const log = (line: string) => console.log(line);
  const workflowBundle = await bundleWorkflowCode({ workflowsPath });
  const s = await startBenchStack(
    { FLEET_CONCURRENCY: String(f.concurrency), MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
    { workflows: { workflowBundle } },
  );
  const direct = await startDirectWorker({
    config: s.config,
    address: s.temporalAddress,
    client: s.client,
    modelBaseUrl: s.modelBaseUrl,
    workflowBundle,
    log: s.log,
  });
  try {
    const keys = await Promise.all(
      Array.from({ length: f.tenants }, (_, i) =>
        s.tenant(`bench-${i}`, { maxQueued: 100_000, maxInFlight: f.concurrency }),
      ),
    );
    const workload = { steps: f.steps, tokensPerStep: f.tokensPerStep };
    const submit = async (i: number): Promise<string> => {
      const r = await s.call(
        'POST',
        '/v1/runs',
        {
          agent: 'synthetic',
          input: workload,
          priority: 'standard',
          estimatedTokens: f.steps * f.tokensPerStep,
        },
        keys[i % keys.length],
      );
      if (r.status !== 202) throw new Error(`POST /v1/runs: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.runId as string;
    };
    const directOpts = {
      ...workload,
      concurrency: f.concurrency,
      sample: f.sample,
      separateSignal: f.separateSignal === 1,
    };

    log(`warm-up: ${f.warmup} runs on each path (not counted)`);
    await directPath(s.client, { ...directOpts, runs: f.warmup, sample: 0, prefix: 'warm' }, log);
    await schedulerPath(s.client, submit, { runs: f.warmup, concurrency: f.concurrency, sample: 0 }, log);

    log(`direct start: ${f.runs} runs, ${f.concurrency} in flight, admission at start, no scheduler`);
    const base = await directPath(s.client, { ...directOpts, runs: f.runs, prefix: 'direct' }, log);
    log(`  ${f1(base.runsPerSecond)} runs/s`);

    log(`scheduler path: ${f.runs} runs through POST /v1/runs, ${f.concurrency} in flight`);
    const schedulerId = s.config.schedulerWorkflowId;
    await sleep(2000); // the warm-up's last releases reach the scheduler
    const before = await chainEvents(s.client, schedulerId);
    const sched = await schedulerPath(
      s.client,
      submit,
      { runs: f.runs, concurrency: f.concurrency, sample: f.sample },
      log,
    );
    await sleep(2000);
    const schedulerEvents = Object.fromEntries(
      Object.entries(diffCounts(await chainEvents(s.client, schedulerId), before)).map(([k, v]) => [
        k,
        v / f.runs,
      ]),
    );
    log(`  ${f1(sched.runsPerSecond)} runs/s`);

    const ratio = sched.runsPerSecond / base.runsPerSecond;
    const schedulerEventsPerRun = Object.values(schedulerEvents).reduce((a, b) => a + b, 0);
    console.log('');
    console.log(
      `direct start:   ${f.runs} runs in ${f1(base.seconds)} s = ${f1(base.runsPerSecond)} runs/s; ` +
        `submit→admit p50 ${f1(base.submitToAdmitMs.p50)} ms, p99 ${f1(base.submitToAdmitMs.p99)} ms (${base.sampled} sampled)`,
    );
    console.log(
      `scheduler path: ${f.runs} runs in ${f1(sched.seconds)} s = ${f1(sched.runsPerSecond)} runs/s; ` +
        `submit→admit p50 ${f1(sched.submitToAdmitMs.p50)} ms, p99 ${f1(sched.submitToAdmitMs.p99)} ms (${sched.sampled} sampled)`,
    );
    console.log(`ratio scheduler/direct: ${ratio.toFixed(2)} (goal ≥ 0.6)`);
    console.log('');
    for (const line of account(base, sched, schedulerEvents)) console.log(line);
    const file = writeResult('throughput', {
      runs: f.runs,
      concurrency: f.concurrency,
      baseline: base,
      scheduler: {
        ...sched,
        schedulerEvents,
        schedulerEventsPerRun,
        schedulerWorkflowTasksPerRun: schedulerEvents.workflowTaskCompleted ?? 0,
      },
      ratio,
    });
    console.log(`\nwrote ${file}`);
  } finally {
    await direct.close();
    await s.stop();
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '../src/fleet/worker';
import { flags } from './lib/bench-stack';
import { chainEvents, diffCounts } from './lib/history-account';
import { highestRateUnder, openLoop } from './lib/open-loop';
import type { OpenLoopPath } from './lib/open-loop';
import { writeResult } from './lib/results';
import { closedPath } from './lib/throughput-paths';
import type { PathResult, Submit } from './lib/throughput-paths';
import { startClusterTarget, startDevServerTarget } from './lib/throughput-targets';

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

/** `--open-loop 5,10,20`: the open loop's rates in runs/s (none: no open loop), and the other flags. */
function openLoopRates(argv: string[]): { rates: number[]; rest: string[] } {
  const i = argv.indexOf('--open-loop');
  if (i < 0) return { rates: [], rest: argv };
  const rates = (argv[i + 1] ?? '').split(',').map(Number);
  if (!rates.length || rates.some((r) => !(r > 0)))
    throw new Error(`--open-loop takes rates in runs/s, comma-separated (got ${argv[i + 1]})`);
  return { rates, rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
}

/**
 * `npm run bench -- throughput`: on one Temporal server, the same runs (the run workflow, the
 * synthetic agent's steps through the model simulator) first submitted to a direct front door that
 * starts them with their admission at start (no scheduler in the path), then submitted through the
 * API and admitted by the scheduler; both over HTTP (`POST /v1/runs`), both holding `concurrency`
 * runs in flight on `concurrency` slots. Prints both rates, their ratio, submit→start (the front
 * door's share) and submit→admit latency, and the history events per run, type by type. With
 * `--open-loop`, then drives each rate on each path for `--hold` seconds and prints submit→first
 * model call p50/p99. The server is a dev server in this process, or with `--cluster` the cluster
 * (`npm run cluster`'s shape: the Temporal server built from source on PostgreSQL, two APIs, two
 * workers), whose figures go to `throughput-cluster.json`.
 */
export async function runThroughputVsDirect(argv: string[]): Promise<void> {
  const cluster = argv.includes('--cluster');
  const { rates, rest } = openLoopRates(argv.filter((a) => a !== '--cluster'));
  const f = flags(
    rest,
    {
      runs: 2000,
      concurrency: 50,
      steps: 1,
      tokensPerStep: 100,
      tenants: 4,
      warmup: 100,
      sample: 400,
      separateSignal: 0,
      hold: 20,
      // 1: the API decides first (RUN_START_ORDER=decide-first, the default); 0: it starts first.
      decideFirst: 1,
    },
    { openLoop: rates, ...(cluster ? { cluster: true } : {}) },
  );
  const log = (line: string) => console.log(line);
  const workflowBundle = await bundleWorkflowCode({ workflowsPath });
  const s = await (cluster ? startClusterTarget : startDevServerTarget)({
    env: {
      FLEET_CONCURRENCY: String(f.concurrency),
      // No slots held back for interactive runs: the scheduler path may use all `concurrency`, as the direct path does.
      FLEET_INTERACTIVE_RESERVE: '0',
      MODEL_TPM: '1000000000',
      MODEL_RPM: '100000000',
      RUN_START_ORDER: f.decideFirst === 1 ? 'decide-first' : 'start-first',
    },
    concurrency: f.concurrency,
    separateSignal: f.separateSignal === 1,
    workflowBundle,
    log,
  });
  try {
    const keys = await Promise.all(
      Array.from({ length: f.tenants }, (_, i) =>
        s.tenant(`bench-${i}`, { maxQueued: 100_000, maxInFlight: f.concurrency }),
      ),
    );
    const workload = { steps: f.steps, tokensPerStep: f.tokensPerStep };
    const apiSubmit: Submit = async (i) => {
      const r = await s.postRun(
        {
          agent: 'synthetic',
          input: workload,
          priority: 'standard',
          estimatedTokens: f.steps * f.tokensPerStep,
        },
        keys[i % keys.length]!,
      );
      if (r.status !== 202) throw new Error(`POST /v1/runs: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.runId as string;
    };
    const directSubmit =
      (prefix: string): Submit =>
      (i) =>
        s.door.submit({ runId: `${prefix}-${i}`, ...workload });
    const loop = { concurrency: f.concurrency, sample: f.sample };

    log(`warm-up: ${f.warmup} runs on each path (not counted)`);
    await closedPath(s.client, directSubmit('warm'), { ...loop, runs: f.warmup, sample: 0 }, log);
    await closedPath(s.client, apiSubmit, { ...loop, runs: f.warmup, sample: 0 }, log);

    log(
      `direct start: ${f.runs} runs through the direct POST /v1/runs, ${f.concurrency} in flight, no scheduler`,
    );
    const base = await closedPath(s.client, directSubmit('direct'), { ...loop, runs: f.runs }, log);
    log(`  ${f1(base.runsPerSecond)} runs/s`);

    log(`scheduler path: ${f.runs} runs through the API's POST /v1/runs, ${f.concurrency} in flight`);
    const schedulerId = s.schedulerWorkflowId;
    await sleep(2000); // the warm-up's last releases reach the scheduler
    const before = await chainEvents(s.client, schedulerId);
    const sched = await closedPath(s.client, apiSubmit, { ...loop, runs: f.runs }, log);
    await sleep(2000);
    const schedulerEvents = Object.fromEntries(
      Object.entries(diffCounts(await chainEvents(s.client, schedulerId), before)).map(([k, v]) => [
        k,
        v / f.runs,
      ]),
    );
    log(`  ${f1(sched.runsPerSecond)} runs/s`);

    const paths: OpenLoopPath[] = [
      { name: 'direct', submitFor: directSubmit },
      { name: 'scheduler', submitFor: () => apiSubmit },
    ];
    const points = rates.length ? await openLoop(s.client, paths, rates, f.hold, s.firstCalls, log) : [];
    const under1s = Object.fromEntries(
      paths.map((p) => [
        p.name,
        highestRateUnder(
          points.filter((x) => x.path === p.name),
          1000,
        ),
      ]),
    );

    const ratio = sched.runsPerSecond / base.runsPerSecond;
    const schedulerEventsPerRun = Object.values(schedulerEvents).reduce((a, b) => a + b, 0);
    console.log('');
    for (const [name, r] of [
      ['direct start:  ', base],
      ['scheduler path:', sched],
    ] as const) {
      console.log(
        `${name} ${f.runs} runs in ${f1(r.seconds)} s = ${f1(r.runsPerSecond)} runs/s; ` +
          `submit→start p50/p99 ${f1(r.submitToStartMs.p50)}/${f1(r.submitToStartMs.p99)} ms, ` +
          `submit→admit p50/p99 ${f1(r.submitToAdmitMs.p50)}/${f1(r.submitToAdmitMs.p99)} ms (${r.sampled} sampled)`,
      );
    }
    console.log(`ratio scheduler/direct: ${ratio.toFixed(2)}`);
    console.log('');
    for (const line of account(base, sched, schedulerEvents)) console.log(line);
    if (points.length) {
      console.log('');
      console.log(`open loop, ${f.hold} s per rate: submit→first model call`);
      for (const p of points) {
        console.log(
          `  ${String(p.rate).padStart(4)} runs/s ${p.path.padEnd(9)} p50 ${f1(p.submitToFirstCallMs.p50).padStart(8)} ms ` +
            `p99 ${f1(p.submitToFirstCallMs.p99).padStart(8)} ms; ${f1(p.firstCallsPerSecond)} first calls/s, ` +
            `${f1(p.acceptedPerSecond)} accepted/s; ${p.failed} failed, ${p.missing} missing`,
        );
      }
      for (const [name, r] of Object.entries(under1s))
        console.log(`  highest rate with p99 < 1 s, ${name}: ${r ?? 'none tried'}`);
    }
    const file = writeResult(
      s.scenario,
      {
        ...s.describe,
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
        openLoop: { holdSeconds: f.hold, points, highestRateP99Under1s: under1s },
      },
      s.temporal ? { temporal: s.temporal } : {},
    );
    console.log(`\nwrote ${file}`);
  } finally {
    await s.stop();
  }
}

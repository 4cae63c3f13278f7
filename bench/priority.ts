import { flags, startBenchStack, writeResult } from './lib/bench-stack';
import { percentile } from './lib/stats';
import { fleetRunsClause } from '../src/fleet/run-queues';
import { DEFAULT_INTERACTIVE_RESERVE } from '../src/scheduler';
import type { BenchStack } from './lib/bench-stack';
import { runHops } from './lib/run-hops';
import type { RunHops } from './lib/run-hops';
import { agentsFlag, runVariants } from './lib/agent-variants';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run's hops, and how many admissions the fleet made between its submission and its own. */
interface Sample {
  hops: RunHops;
  admissionsBetween: number;
}

async function firstCallLag(s: BenchStack, token: string, priority: string): Promise<Sample> {
  // The fleet's admission count just before the submission: the run's own admission number minus it,
  // minus one, is how many runs (here: the batch backlog's) were admitted while it waited (an upper bound).
  const admittedBefore = (await s.call('GET', '/v1/admin/scheduler')).body.counters.admitted as number;
  const submittedAt = Date.now();
  const r = await s.call(
    'POST',
    '/v1/runs',
    { agent: s.agent, priority, input: { steps: 1, tokensPerStep: 10 } },
    token,
  );
  if (r.status !== 202) throw new Error(`submit ${priority}: ${r.status} ${JSON.stringify(r.body)}`);
  const acceptedAt = Date.now();
  const runId = r.body.runId as string;
  for (let i = 0; i < 6000; i++) {
    const at = s.sim!.state.firstCalls.get(runId);
    if (at !== undefined) {
      // Let it finish before the next one, so each submission meets the same backlog.
      let admittedAt = NaN;
      let seq = NaN;
      for (let j = 0; j < 600; j++) {
        const v = await s.call('GET', `/v1/runs/${runId}`, undefined, token);
        if (typeof v.body?.admittedAt === 'string') admittedAt = Date.parse(v.body.admittedAt as string);
        if (typeof v.body?.admissionSeq === 'number') seq = v.body.admissionSeq as number;
        if (v.body?.status === 'completed') break;
        await pause(100);
      }
      const hops = await runHops(s.client, runId, {
        submitted: submittedAt,
        accepted: acceptedAt,
        admitted: admittedAt,
        firstCall: at,
      });
      return { hops, admissionsBetween: seq - admittedBefore - 1 };
    }
    await pause(20);
  }
  throw new Error(`${runId} made no model call in 120 s`);
}

/** Samples per lane, one submission at a time, and their per-hop figures. */
async function measure(s: BenchStack, token: string, samples: number) {
  const samplesOf: Record<string, Sample[]> = { interactive: [], standard: [] };
  for (let i = 0; i < samples; i++) {
    samplesOf.interactive!.push(await firstCallLag(s, token, 'interactive'));
    samplesOf.standard!.push(await firstCallLag(s, token, 'standard'));
  }
  const hops = Object.fromEntries(
    Object.entries(samplesOf).map(([lane, xs]) => [lane, xs.map((x) => x.hops)]),
  );
  const lanes = Object.fromEntries(
    Object.entries(hops).map(([lane, hs]) => {
      const xs = hs.map((h) => h.firstCall);
      const between = samplesOf[lane]!.map((x) => x.admissionsBetween);
      // Per hop: p50/p99 of the time after submission at which the runs had reached it.
      const perHop = Object.fromEntries(
        (Object.keys(hs[0]!) as (keyof RunHops)[]).map((k) => {
          const ys = hs.map((h) => h[k]).filter((y) => Number.isFinite(y));
          return [k, { p50Ms: percentile(ys, 50), p99Ms: percentile(ys, 99) }];
        }),
      );
      return [
        lane,
        {
          n: xs.length,
          p50Ms: percentile(xs, 50),
          p99Ms: percentile(xs, 99),
          maxMs: Math.max(...xs),
          /** Admissions of other runs between each run's submission and its admission: the most. */
          maxAdmissionsBetween: Math.max(...between),
          perHop,
        },
      ];
    }),
  );
  return { lanes, hops };
}

/**
 * `npm run bench -- priority [--backlog 5000 --concurrency 10 --samples 10 --reserve 0.05 --compare 1 --agents built-in|user|both]`:
 * with a batch backlog queued behind a saturated fleet, the time from submission to the first model
 * call reaching the simulator, per lane (interactive and standard submitted one at a time), with each
 * hop on the way (`RunHops`). `--compare 1` measures the same backlog with no interactive reserve
 * first, then with `--reserve`; `lanes` holds the last phase. `--agents both` measures it with the
 * built-in agent, then with its user-code copy (bench/agents), each on a fresh stack.
 */
export async function runPriorityBench(argv: string[]): Promise<void> {
  const { agents, variants, rest } = agentsFlag(argv);
  const f = flags(
    rest,
    {
      backlog: 5000,
      concurrency: 10,
      samples: 10,
      stepMs: 1500,
      reserve: DEFAULT_INTERACTIVE_RESERVE,
      compare: 1,
    },
    { agents },
  );
  const result = await runVariants(variants, async (variant) => {
    const s = await startBenchStack(
      { FLEET_CONCURRENCY: String(f.concurrency), MODEL_TPM: '1000000000', MODEL_RPM: '100000000' },
      { agents: variant },
    );
    try {
      return await measureBacklog(s, f);
    } finally {
      await s.stop();
    }
  });
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('priority', result)}`);
}

/** One stack's measure: the backlog queued, then each phase's samples. */
async function measureBacklog(
  s: BenchStack,
  f: {
    backlog: number;
    concurrency: number;
    samples: number;
    stepMs: number;
    reserve: number;
    compare: number;
  },
) {
  const bulk = await s.tenant('bulk', { maxQueued: 100_000, maxInFlight: f.concurrency * 10 });
  const users = await s.tenant('users');
  const t0 = Date.now();
  const items = Array.from({ length: f.backlog }, () => ({
    steps: 1,
    tokensPerStep: 10,
    stepMs: f.stepMs,
  }));
  const b = await s.call('POST', '/v1/batches', { agent: s.agent, items }, bulk);
  if (b.status !== 202) throw new Error(`batch: ${b.status} ${JSON.stringify(b.body)}`);
  await s.client.workflow.getHandle(b.body.batchId as string).result();
  const createdMs = Date.now() - t0;
  // Wait for the backlog's first workflow tasks (the creation burst) to be done.
  for (;;) {
    const newest = s.client.workflow.list({
      query: `${fleetRunsClause(s.config.temporal.taskQueue)} AND RunStatus = 'queued' AND ExecutionStatus = 'Running'`,
      pageSize: 1,
    });
    let settled = false;
    for await (const wf of newest) {
      const events = (await s.client.workflow.getHandle(wf.workflowId).fetchHistory()).events ?? [];
      settled = events.some((e) => e.workflowTaskCompletedEventAttributes);
      break;
    }
    if (settled) break;
    await pause(1000);
  }
  const settledMs = Date.now() - t0;
  const queued = (await s.call('GET', '/v1/admin/scheduler')).body.queued.total as number;
  // The same backlog measured without the interactive reserve first (the lever off), then with the
  // configured one (what the fleet runs with), so both meet the same machine load.
  const phases: Record<string, unknown> = {};
  let summary: Record<string, unknown> = {};
  for (const reserve of f.compare ? [0, f.reserve] : [f.reserve]) {
    const p = await s.call('PATCH', '/v1/admin/scheduler', { interactiveReserve: reserve });
    if (p.status !== 200) throw new Error(`patch: ${p.status} ${JSON.stringify(p.body)}`);
    // Let batch settle into the slots the setting leaves it (a step ends within stepMs).
    await pause(2 * f.stepMs);
    const st = (await s.call('GET', '/v1/admin/scheduler')).body;
    const phase = await measure(s, users, f.samples);
    phases[`interactiveReserve ${reserve}`] = {
      reservedSlots: st.config.reservedSlots as number,
      inFlightAtStart: st.inFlight as number,
      queuedAtStart: st.queued.total as number,
      ...phase,
    };
    summary = phase.lanes;
  }
  return {
    ...f,
    queuedAtMeasurement: queued,
    createdMs,
    settledMs,
    lanes: summary,
    phases,
  };
}

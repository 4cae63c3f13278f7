import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { RunSpec } from '../../src/contract/fleet-port';
import { PriorityKey, RunStatusKey, TenantIdKey } from '../../src/contract/search-attributes';
import { mapLimit } from '../../src/util/map-limit';
import type { runWorkflow } from '../../src/workflows/run';
import { admitSignal } from '../../src/contract/run-messages';
import { DIRECT_TASK_QUEUE } from './direct-worker';
import { perRun, runHistory } from './history-account';
import { percentile } from './stats';

export interface Workload {
  steps: number;
  tokensPerStep: number;
}

/** One path's figures. Latency and events come from the histories of a sample of its runs. */
export interface PathResult {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  sampled: number;
  submitToAdmitMs: { p50: number; p99: number; max: number };
  /** Mean events per run of the run workflow, by type. */
  events: Record<string, number>;
  eventsPerRun: number;
  workflowTasksPerRun: number;
}

/**
 * Runs `total` runs with `concurrency` of them in flight at a time (each loop submits, awaits the
 * run's result, submits the next), so both paths hold the same number of runs in flight.
 */
async function closedLoop(
  total: number,
  concurrency: number,
  one: (i: number) => Promise<void>,
  log: (line: string) => void,
): Promise<number> {
  let next = 0;
  let done = 0;
  const t0 = Date.now();
  const ticker = setInterval(
    () => log(`  ${((Date.now() - t0) / 1000).toFixed(0)} s: ${done}/${total} completed`),
    10_000,
  );
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, total) }, async () => {
        for (let i = next++; i < total; i = next++) {
          await one(i);
          done++;
        }
      }),
    );
  } finally {
    clearInterval(ticker);
  }
  return (Date.now() - t0) / 1000;
}

async function measure(
  client: Client,
  ids: string[],
  submittedAt: Map<string, number>,
  seconds: number,
  sample: number,
): Promise<PathResult> {
  const step = Math.max(1, ids.length / Math.max(1, sample));
  const picked = Array.from(
    new Set(Array.from({ length: Math.min(sample, ids.length) }, (_, k) => ids[Math.floor(k * step)]!)),
  );
  const histories = await mapLimit(picked, 8, (id) => runHistory(client, id));
  const latencies = histories.flatMap((h, k) =>
    h.admittedAtMs === undefined ? [] : [h.admittedAtMs - submittedAt.get(picked[k]!)!],
  );
  const events = perRun(histories.map((h) => h.counts));
  return {
    runs: ids.length,
    seconds,
    runsPerSecond: ids.length / seconds,
    sampled: picked.length,
    submitToAdmitMs: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
    },
    events,
    eventsPerRun: Object.values(events).reduce((a, b) => a + b, 0),
    workflowTasksPerRun: events.workflowTaskCompleted ?? 0,
  };
}

/**
 * The direct path: each run is started on the direct worker's task queue with its admission in the
 * start (signal-with-start: the `admit` signal lands in the same transaction as the start), so the
 * run's first workflow task already holds it. With `separateSignal`, start then signal (two calls).
 */
export async function directPath(
  client: Client,
  o: Workload & {
    runs: number;
    concurrency: number;
    sample: number;
    prefix: string;
    separateSignal: boolean;
  },
  log: (line: string) => void,
): Promise<PathResult> {
  const ids: string[] = [];
  const submittedAt = new Map<string, number>();
  const seconds = await closedLoop(
    o.runs,
    o.concurrency,
    async (i) => {
      const runId = `${o.prefix}-${i}`;
      const now = Date.now();
      const spec: RunSpec = {
        runId,
        tenant: 'direct',
        agent: 'synthetic',
        priority: 'standard',
        input: { steps: o.steps, tokensPerStep: o.tokensPerStep },
        estimatedTokens: o.steps * o.tokensPerStep,
        createdAt: new Date(now).toISOString(),
      };
      // What the scheduler would send: the first attempt, with a lease far longer than the run.
      const notice = { attempt: 0, seq: i + 1, admittedAt: now, leaseExpiresAt: now + 3_600_000 };
      const options = {
        workflowId: runId,
        taskQueue: DIRECT_TASK_QUEUE,
        args: [spec] as [RunSpec],
        // As src/fleet/start-run.ts starts a run.
        typedSearchAttributes: new TypedSearchAttributes([
          { key: TenantIdKey, value: spec.tenant },
          { key: PriorityKey, value: spec.priority },
          { key: RunStatusKey, value: 'queued' },
        ]),
        memo: { agent: spec.agent, createdAt: spec.createdAt },
      };
      ids.push(runId);
      submittedAt.set(runId, now);
      const handle = o.separateSignal
        ? await client.workflow.start<typeof runWorkflow>('runWorkflow', options)
        : await client.workflow.signalWithStart<typeof runWorkflow, [typeof notice]>('runWorkflow', {
            ...options,
            signal: admitSignal,
            signalArgs: [notice],
          });
      if (o.separateSignal) await handle.signal(admitSignal, notice);
      await handle.result();
    },
    log,
  );
  return measure(client, ids, submittedAt, seconds, o.sample);
}

/** The scheduler path: each run is submitted through the API (`POST /v1/runs`), as a client would. */
export async function schedulerPath(
  client: Client,
  submit: (i: number) => Promise<string>,
  o: { runs: number; concurrency: number; sample: number },
  log: (line: string) => void,
): Promise<PathResult> {
  const ids: string[] = [];
  const submittedAt = new Map<string, number>();
  const seconds = await closedLoop(
    o.runs,
    o.concurrency,
    async (i) => {
      const now = Date.now();
      const runId = await submit(i);
      ids.push(runId);
      submittedAt.set(runId, now);
      await client.workflow.getHandle(runId).result();
    },
    log,
  );
  return measure(client, ids, submittedAt, seconds, o.sample);
}

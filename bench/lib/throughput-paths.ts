import type { Client } from '@temporalio/client';
import { mapLimit } from '../../src/util/map-limit';
import { perRun, runHistory } from './history-account';
import { percentile } from './stats';

export interface Workload {
  steps: number;
  tokensPerStep: number;
}

/** p50, p99 and max of a latency, in ms. */
export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

/** One path's figures. Latency and events come from the histories of a sample of its runs. */
export interface PathResult {
  runs: number;
  seconds: number;
  runsPerSecond: number;
  sampled: number;
  /** Submission → the run's workflow started: the front door's share (HTTP, parsing, and on the scheduler path the API's checks). */
  submitToStartMs: Spread;
  submitToAdmitMs: Spread;
  /** Mean events per run of the run workflow, by type. */
  events: Record<string, number>;
  eventsPerRun: number;
  workflowTasksPerRun: number;
}

/** Submits run number `i` over HTTP and resolves with its id once the 202 arrives. */
export type Submit = (i: number) => Promise<string>;

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

const spread = (xs: number[]): Spread => ({
  p50: percentile(xs, 50),
  p99: percentile(xs, 99),
  max: percentile(xs, 100),
});

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
  const since = (k: number, at: number | undefined) =>
    at === undefined ? [] : [at - submittedAt.get(picked[k]!)!];
  const events = perRun(histories.map((h) => h.counts));
  return {
    runs: ids.length,
    seconds,
    runsPerSecond: ids.length / seconds,
    sampled: picked.length,
    submitToStartMs: spread(histories.flatMap((h, k) => since(k, h.startedAtMs))),
    submitToAdmitMs: spread(histories.flatMap((h, k) => since(k, h.admittedAtMs))),
    events,
    eventsPerRun: Object.values(events).reduce((a, b) => a + b, 0),
    workflowTasksPerRun: events.workflowTaskCompleted ?? 0,
  };
}

/**
 * One path in a closed loop: each run is submitted over HTTP (`POST /v1/runs` of the API, or of the
 * direct front door) and awaited to its result before the loop submits the next.
 */
export async function closedPath(
  client: Client,
  submit: Submit,
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

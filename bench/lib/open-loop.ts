import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { mapLimit } from '../../src/util/map-limit';
import { percentile } from './stats';
import type { Submit } from './throughput-paths';

/** One path at one offered rate: submissions on a fixed schedule, whatever the runs before them do. */
export interface OpenLoopPoint {
  path: string;
  /** Offered arrivals per second. */
  rate: number;
  runs: number;
  /** Submissions the front door refused or failed (not in the latencies). */
  failed: number;
  /** 202s per second, from the first submission to the last 202. */
  acceptedPerSecond: number;
  /** First model calls per second, between the first and the last first call. */
  firstCallsPerSecond: number;
  /** Submission → the run's first model call reaching the simulator, ms. */
  submitToFirstCallMs: { p50: number; p99: number; max: number };
  /** Runs with no first call by the deadline (counted as missing, not in the latencies). */
  missing: number;
}

/** A path as the open loop drives it: `submitFor(prefix)` submits run `i` with ids under `prefix`. */
export interface OpenLoopPath {
  name: string;
  submitFor(prefix: string): Submit;
}

const DEADLINE_MS = 180_000;

/** The first-call arrival times the model simulator recorded for `runIds` (absent ones omitted). */
export type FirstCalls = (runIds: readonly string[]) => Promise<Record<string, number>>;

/** Asks `firstCalls` for the runs still without one until each has one or `deadline` passes. */
async function awaitFirstCalls(
  ids: readonly string[],
  firstCalls: FirstCalls,
  deadline: number,
): Promise<Record<string, number>> {
  const at: Record<string, number> = {};
  for (;;) {
    const missing = ids.filter((id) => at[id] === undefined);
    if (missing.length) Object.assign(at, await firstCalls(missing));
    if (ids.every((id) => at[id] !== undefined) || Date.now() >= deadline) return at;
    await sleep(250);
  }
}

/**
 * Submits `rate × holdSeconds` runs at `rate` per second on a fixed schedule (not waiting for any
 * run), then waits for each run's first model call (`firstCalls`, the simulator's log) and its
 * result, so the next phase starts on an idle fleet.
 */
async function phase(
  client: Client,
  p: OpenLoopPath,
  rate: number,
  holdSeconds: number,
  firstCalls: FirstCalls,
): Promise<OpenLoopPoint> {
  const submit = p.submitFor(`open-${p.name}-${rate}`);
  const n = Math.max(1, Math.round(rate * holdSeconds));
  const submittedAt = new Map<string, number>();
  const t0 = Date.now();
  let lastAccepted = t0;
  let failed = 0;
  const pending: Promise<string | undefined>[] = [];
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const at = Date.now();
    pending.push(
      submit(i).then(
        (runId) => {
          submittedAt.set(runId, at);
          lastAccepted = Math.max(lastAccepted, Date.now());
          return runId;
        },
        () => {
          failed++;
          return undefined;
        },
      ),
    );
  }
  const ids = (await Promise.all(pending)).filter((x): x is string => x !== undefined);
  const firstCallAt = await awaitFirstCalls(ids, firstCalls, Date.now() + DEADLINE_MS);
  const calls = ids.flatMap((id) => {
    const at = firstCallAt[id];
    return at === undefined ? [] : [{ at, lag: at - submittedAt.get(id)! }];
  });
  await mapLimit(ids, 50, (id) => client.workflow.getHandle(id).result());
  const lags = calls.map((c) => c.lag);
  const callTimes = calls.map((c) => c.at);
  const callSpan = (Math.max(...callTimes) - Math.min(...callTimes)) / 1000;
  return {
    path: p.name,
    rate,
    runs: n,
    failed,
    acceptedPerSecond: ids.length / Math.max(1e-3, (lastAccepted - t0) / 1000),
    firstCallsPerSecond: calls.length > 1 ? (calls.length - 1) / Math.max(1e-3, callSpan) : NaN,
    submitToFirstCallMs: {
      p50: percentile(lags, 50),
      p99: percentile(lags, 99),
      max: percentile(lags, 100),
    },
    missing: ids.length - calls.length,
  };
}

/** The highest rate, of those tried in increasing order, up to which p99 stayed under `boundMs`; null if none. */
export function highestRateUnder(points: readonly OpenLoopPoint[], boundMs: number): number | null {
  let best: number | null = null;
  for (const p of [...points].sort((a, b) => a.rate - b.rate)) {
    if (!(p.submitToFirstCallMs.p99 < boundMs) || p.missing > 0 || p.failed > 0) break;
    best = p.rate;
  }
  return best;
}

/** Each rate in increasing order, each path at it in turn, each held `holdSeconds`. */
export async function openLoop(
  client: Client,
  paths: readonly OpenLoopPath[],
  rates: readonly number[],
  holdSeconds: number,
  firstCalls: FirstCalls,
  log: (line: string) => void,
): Promise<OpenLoopPoint[]> {
  const out: OpenLoopPoint[] = [];
  for (const rate of [...rates].sort((a, b) => a - b)) {
    for (const p of paths) {
      log(`open loop: ${p.name} at ${rate} runs/s for ${holdSeconds} s`);
      const pt = await phase(client, p, rate, holdSeconds, firstCalls);
      log(
        `  submit→first call p50 ${pt.submitToFirstCallMs.p50.toFixed(0)} ms, p99 ${pt.submitToFirstCallMs.p99.toFixed(0)} ms; ` +
          `${pt.firstCallsPerSecond.toFixed(1)} first calls/s; ${pt.failed} failed, ${pt.missing} missing`,
      );
      out.push(pt);
    }
  }
  return out;
}

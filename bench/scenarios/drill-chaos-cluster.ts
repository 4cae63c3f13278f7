import type { LedgerCheck } from '../lib/drill-stack';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import { checkSink, startClusterDrillStack } from '../lib/cluster-drill-stack';
import type { ClusterDrillStack } from '../lib/cluster-drill-stack';
import {
  answerTally,
  finishAndTally,
  tallyFailures,
  crashSlack,
  sleep,
  submitUnits,
  until,
} from '../lib/drill-stack';
import { mulberry32 } from '../lib/prng';
import type { DrillOptions } from './drill-deploy';

export type ClusterFault = 'kill-worker' | 'kill-history' | 'restart-postgres';

export interface ClusterFaultRecord {
  kind: ClusterFault;
  target: string;
  atCompleted: number;
  /** Fault to the part answering again. */
  backMs: number;
  /** Fault to the first completion counted after it. */
  recoveryMs: number;
}

export interface ClusterChaosResult {
  units: number;
  accepted: number;
  lost: number;
  lostRunIds: string[];
  duplicated: number;
  effects: { effects: number; attempts: number; duplicates: number };
  sink: SinkSummary;
  /** Every answer the clients got from the two APIs, by HTTP status (0: network error or timeout). */
  answers: Record<string, number>;
  counters: Record<string, number>;
  /** The tenant's ledger against the simulator's bill for it. */
  ledger: LedgerCheck;
  faults: ClusterFaultRecord[];
  seconds: number;
  pass: boolean;
  failures: string[];
}

/**
 * The chaos drill on the cluster: during an N-unit run submitted through both APIs, SIGKILL a
 * worker (replaced), SIGKILL the history service process (restarted), and restart PostgreSQL; every
 * unit completes once and the effect sink receives every effect exactly once.
 */
export async function runClusterChaosDrill(o: DrillOptions & { seed?: number }): Promise<ClusterChaosResult> {
  const log = o.log ?? (() => {});
  const rnd = mulberry32(o.seed ?? Date.now());
  const kinds: ClusterFault[] = ['kill-worker', 'kill-history', 'kill-worker', 'restart-postgres'];
  const at = [0.15, 0.35, 0.55, 0.75];
  const t0 = Date.now();
  const s = await startClusterDrillStack({ concurrency: o.concurrency, log });
  try {
    const token = await s.tenant('drill-chaos', { maxQueued: 100_000, maxInFlight: o.concurrency });
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 10, effect: true };
    const answers = answerTally();
    const submitting = submitUnits(s, token, o.units, input, 'chaos', o.timeoutMs, answers);
    submitting.catch(() => undefined);
    const faults: ClusterFaultRecord[] = [];
    for (const [i, kind] of kinds.entries()) {
      const threshold = Math.floor(at[i]! * o.units);
      await until(
        'completions',
        () => s.status(),
        (v) => v?.counters.completed >= threshold,
        o.timeoutMs,
        100,
      );
      await sleep(Math.floor(rnd() * 500));
      const before = (await s.status())!.counters.completed as number;
      faults.push(await strike(s, kind, i, before, rnd, o, log));
    }
    const accepted = await submitting;
    const t = await finishAndTally(s, token, accepted, o.units, o.timeoutMs);
    const { sink, failures: sinkFailures } = await checkSink(s, t.effects.effects, o.units);
    // A crash may cut calls before the provider served them: each is charged its worst case.
    const slack = crashSlack(kinds.length, o.concurrency, accepted, o.steps, input.tokensPerStep);
    const failures = [...tallyFailures(t, o.units, slack), ...sinkFailures, ...answers.failures()];
    return {
      units: o.units,
      accepted: accepted.length,
      ...t,
      sink,
      answers: answers.answers,
      faults,
      seconds: (Date.now() - t0) / 1000,
      pass: failures.length === 0,
      failures,
    };
  } finally {
    await s.stop();
  }
}

async function strike(
  s: ClusterDrillStack,
  kind: ClusterFault,
  i: number,
  completed: number,
  rnd: () => number,
  o: DrillOptions,
  log: (m: string) => void,
): Promise<ClusterFaultRecord> {
  const start = Date.now();
  let target: string;
  if (kind === 'kill-worker') {
    const w = Math.floor(rnd() * 2);
    target = s.workers[w]!.name;
    await s.replaceWorker(w, `chaos-${i + 2}`);
  } else if (kind === 'kill-history') {
    target = 'temporal-history';
    await s.cluster.temporal.restartService('history', { kill: true });
  } else {
    target = 'postgres';
    await s.cluster.temporal.pg.restart({ kill: false });
  }
  await until(
    'the API answering',
    () => s.status(),
    (v) => v !== null,
    o.timeoutMs,
    100,
  );
  const backMs = Date.now() - start;
  await until(
    'progress after the fault',
    () => s.status(),
    (v) => v?.counters.completed > completed || v?.counters.completed >= o.units,
    o.timeoutMs,
    50,
  );
  const recoveryMs = Date.now() - start;
  log(`${kind} (${target}) at ${completed} completed: back in ${backMs} ms, progress after ${recoveryMs} ms`);
  return { kind, target, atCompleted: completed, backMs, recoveryMs };
}

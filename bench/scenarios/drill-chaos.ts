import type { CallLogSummary } from '../../src/standins/modelplane/call-log';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import type { LedgerCheck } from '../lib/drill-stack';
import { mulberry32 } from '../lib/prng';
import {
  answerTally,
  finishAndTally,
  tallyFailures,
  crashSlack,
  simAdmin,
  sleep,
  startDrillStack,
  submitUnits,
  until,
} from '../lib/drill-stack';
import type { DrillStack } from '../lib/drill-stack';
import type { DrillOptions } from './drill-deploy';

export type FaultKind = 'kill-worker' | 'restart-temporal';

export interface FaultRecord {
  kind: FaultKind;
  /** Completed units when the fault struck. */
  atCompleted: number;
  /** Fault to replacement worker ready (kill) or to the server answering again (restart). */
  backMs: number;
  /** Fault to the first completion counted after it: the fleet makes progress again. */
  recoveryMs: number;
  /** Restart only: whether the worker child lived through it (its connection recovered by itself). */
  workerSurvived?: boolean;
}

export interface ChaosDrillResult {
  units: number;
  accepted: number;
  lost: number;
  lostRunIds: string[];
  duplicated: number;
  effects: { effects: number; attempts: number; duplicates: number };
  /** What the effect sink counted by itself, and the simulator's log of served calls. */
  sink: SinkSummary;
  calls: CallLogSummary;
  counters: Record<string, number>;
  /** Every answer the clients got from the API, by HTTP status (0: network error or timeout). */
  answers: Record<string, number>;
  /** The tenant's ledger against the simulator's bill for it. */
  ledger: LedgerCheck;
  faults: FaultRecord[];
  seconds: number;
  pass: boolean;
  failures: string[];
}

/**
 * Issue 6's chaos drill: during an N-unit run, SIGKILL the worker child `kills` times at random
 * moments (a new one is started each time) and restart the Temporal dev server once on the same
 * port and SQLite file; every unit still completes exactly once, and each fault's recovery time is
 * measured as the time until completions progress again.
 */
export async function runChaosDrill(
  o: DrillOptions & {
    kills?: number;
    seed?: number;
    /**
     * true (default): each fault waits for the fleet to progress after the previous one, so every
     * recovery time stands alone. false: the next fault strikes 1–3 s after the previous one is
     * back (harsher, and faster: each SIGKILL costs Temporal's 10 s workflow-task timeout).
     */
    settle?: boolean;
  },
): Promise<ChaosDrillResult> {
  const settle = o.settle ?? true;
  const log = o.log ?? (() => {});
  const rnd = mulberry32(o.seed ?? Date.now());
  const kinds: FaultKind[] = [
    ...Array<FaultKind>(Math.max(3, o.kills ?? 3)).fill('kill-worker'),
    'restart-temporal',
  ];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  // Each fault strikes once a random share of the units has completed, spread over 10–80 %.
  const span = 0.7 / kinds.length;
  const at = kinds.map((_, i) => 0.1 + span * (i + rnd() * 0.8));

  const t0 = Date.now();
  const s = await startDrillStack({ concurrency: o.concurrency, log, onStatus: o.onStatus, sink: true });
  try {
    await s.startWorker('chaos-1');
    const token = await s.tenant('drill-chaos', { maxQueued: 100_000, maxInFlight: o.concurrency });
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 10, effect: true };
    const answers = answerTally();
    const submitting = submitUnits(s, token, o.units, input, 'chaos', o.timeoutMs, answers);
    submitting.catch(() => undefined);

    const faults: Promise<FaultRecord>[] = [];
    for (const [i, kind] of kinds.entries()) {
      const threshold = Math.floor((settle ? at[i]! : at[0]!) * o.units);
      const st = await until(
        `${threshold} completions`,
        () => s.status(),
        (v) => v?.counters.completed >= threshold,
        o.timeoutMs,
        50,
      );
      await sleep(settle || i === 0 ? Math.floor(rnd() * 500) : 1000 + Math.floor(rnd() * 2000));
      const before = (await s.status()) ?? st;
      const fault = await strike(s, kind, i, before.counters.completed as number, o, log);
      faults.push(fault.recovered);
      if (settle) await fault.recovered;
    }

    const accepted = await submitting;
    const t = await finishAndTally(s, token, accepted, o.units, o.timeoutMs);
    const sink = await s.sink();
    const calls = await simAdmin<CallLogSummary>(s.simUrl, 'calls');
    // A crash may cut calls before the provider served them: each is charged its worst case.
    const slack = crashSlack(kinds.length, o.concurrency, accepted, o.steps, input.tokensPerStep);
    const failures = [...tallyFailures(t, o.units, slack), ...answers.failures()];
    return {
      units: o.units,
      accepted: accepted.length,
      ...t,
      sink,
      calls,
      answers: answers.answers,
      faults: await Promise.all(faults),
      seconds: (Date.now() - t0) / 1000,
      pass: failures.length === 0,
      failures,
    };
  } finally {
    await s.stop();
  }
}

async function strike(
  s: DrillStack,
  kind: FaultKind,
  i: number,
  completed: number,
  o: DrillOptions,
  log: (m: string) => void,
): Promise<{ recovered: Promise<FaultRecord> }> {
  const at = Date.now();
  let backMs: number;
  let workerSurvived: boolean | undefined;
  if (kind === 'kill-worker') {
    await s.worker!.kill();
    await s.startWorker(`chaos-${i + 2}`);
    backMs = Date.now() - at;
  } else {
    const worker = s.worker!;
    await s.restartTemporal();
    await until(
      'the API through the restarted server',
      () => s.status(),
      (v) => v !== null,
      o.timeoutMs,
    );
    backMs = Date.now() - at;
    workerSurvived = worker.alive();
    if (!workerSurvived) await s.startWorker(`chaos-${i + 2}`);
  }
  const recovered = until(
    'progress after the fault',
    () => s.status(),
    (v) => v?.counters.completed > completed || v?.counters.completed >= o.units,
    o.timeoutMs,
    50,
  ).then((st): FaultRecord => {
    const recoveryMs = Date.now() - at;
    log(
      `${kind} at ${completed} completed: back in ${backMs} ms, progress after ${recoveryMs} ms` +
        (workerSurvived === undefined
          ? ''
          : ` (worker ${workerSurvived ? 'reconnected' : 'died and was restarted'})`) +
        ` [completed ${st.counters.completed}]`,
    );
    return {
      kind,
      atCompleted: completed,
      backMs,
      recoveryMs,
      ...(workerSurvived === undefined ? {} : { workerSurvived }),
    };
  });
  recovered.catch(() => undefined);
  return { recovered };
}

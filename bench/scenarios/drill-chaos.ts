import path from 'node:path';
import { stepWorstCase } from '../../src/contract/model-call';
import type { CallLogSummary } from '../../src/standins/modelplane/call-log';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import type { LedgerCheck } from '../lib/drill-stack';
import { mulberry32 } from '../lib/prng';
import {
  answerTally,
  finishAndTally,
  tallyFailures,
  simAdmin,
  sleep,
  startDrillStack,
  submitUnits,
  until,
} from '../lib/drill-stack';
import type { LocalDrillStack } from '../lib/drill-stack';
import type { DrillOptions } from './drill-deploy';
import { modelWordsRequests, ModelWordsInputSchema } from '../agents/model-words';
import { cutSurplus, requestWorstCase, worstCasesByKey } from '../lib/call-ledger';

/** The user's agents module the drill's model units run on (outside src/), served by `fairway worker`. */
const MODEL_AGENTS = path.join(__dirname, '..', 'agents', 'model-words.ts');

export type FaultKind = 'kill-worker' | 'restart-temporal';

export interface FaultRecord {
  kind: FaultKind;
  /** Completed units when the fault struck. */
  atCompleted: number;
  /** Fault to replacement worker ready (kill) or to the server answering again (restart). */
  backMs: number;
  /** Fault to the first completion counted after it: the fleet makes progress again. */
  recoveryMs: number;
  /** Restart only: whether both worker children lived through it (their connections recovered by themselves). */
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
  /**
   * The units on the user's agent (every other one): ctx.model calls whose prompts repeat a word
   * `words` times, so each call's worst case (what it reserves) is the tokenizer's count of it.
   */
  modelUnits: { units: number; calls: number; words: [number, number]; worstCase: [number, number] };
  /**
   * The calls the faults cut (billed, the answer never read): each is charged its worst case
   * provisionally, `surplus` (worst case − bill) over the bill, until its reconciliation corrects it:
   * the ledger ends at the bill exactly.
   */
  cut: { calls: number; modelCalls: number; billed: number; surplus: number };
  faults: FaultRecord[];
  seconds: number;
  pass: boolean;
  failures: string[];
}

/**
 * Issue 6's chaos drill: during an N-unit run, SIGKILL the worker children `kills` times at random
 * moments (new ones are started each time) and restart the Temporal dev server once on the same
 * port and SQLite file; every unit still completes exactly once, and each fault's recovery time is
 * measured as the time until completions progress again. Every other unit runs on a user's agent
 * (bench/agents/model-words.ts: ctx.model calls with prompts of varying length) served by the
 * user's own worker (`fairway worker --agents`), killed with the fleet's; the tenant's ledger is
 * then the simulator's bill with each cut call charged its worst case.
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

  // The model units' prompts: a word repeated 20 to 1,500 times, drawn from the seed.
  const words = mulberry32((o.seed ?? 0) + 1);
  const modelInputs = Array.from({ length: Math.ceil(o.units / 2) }, () =>
    ModelWordsInputSchema.parse({ words: 20 + Math.floor(words() * 1481), calls: o.steps, effect: true }),
  );

  const t0 = Date.now();
  const s = await startDrillStack({
    concurrency: o.concurrency,
    log,
    onStatus: o.onStatus,
    sink: true,
    agents: [MODEL_AGENTS],
    // A model call takes about a step, so a SIGKILL meets calls in flight.
    simLatency: { baseMs: Math.min(o.stepMs, 200) },
  });
  try {
    await Promise.all([s.startWorker('chaos-1'), s.startAgentsWorker('chaos-user-1')]);
    const token = await s.tenant('drill-chaos', { maxQueued: 100_000, maxInFlight: o.concurrency });
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 10, effect: true };
    const answers = answerTally();
    const unit = (i: number) =>
      i % 2 === 0 ? { agent: 'model-words', input: modelInputs[i / 2]! } : { agent: 'synthetic', input };
    const submitting = submitUnits(s, token, o.units, input, 'chaos', o.timeoutMs, { ...answers, unit });
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
    // A crash may cut calls the provider billed: each is charged its worst case, not its bill.
    const modelRuns = accepted.filter((_, i) => i % 2 === 0);
    const modelWorst = modelInputs.map((m) => modelWordsRequests(m).map(requestWorstCase));
    const worstOf = worstCasesByKey(modelRuns, modelWorst);
    const stepWorst = (key: string) => {
      const at = key.lastIndexOf(':');
      return stepWorstCase(key.slice(0, at), Number(key.slice(at + 1)), input.tokensPerStep);
    };
    const cutCalls = (await s.bill()).cut[t.ledger.tenant];
    const surplus = cutSurplus(cutCalls, (key) => worstOf.get(key) ?? stepWorst(key));
    // Exact: provisional charges reconciled with the simulator's usage, each call key booked once.
    const failures = [...tallyFailures(t, o.units), ...answers.failures()];
    const flat = modelWorst.flat();
    return {
      units: o.units,
      accepted: accepted.length,
      ...t,
      modelUnits: {
        units: modelInputs.length,
        calls: flat.length,
        words: [Math.min(...modelInputs.map((m) => m.words)), Math.max(...modelInputs.map((m) => m.words))],
        worstCase: [Math.min(...flat), Math.max(...flat)],
      },
      cut: {
        calls: cutCalls?.calls ?? 0,
        modelCalls: (cutCalls?.keys ?? []).filter(([k]) => worstOf.has(k)).length,
        billed: cutCalls?.tokens ?? 0,
        surplus,
      },
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
  s: LocalDrillStack,
  kind: FaultKind,
  i: number,
  completed: number,
  o: DrillOptions,
  log: (m: string) => void,
): Promise<{ recovered: Promise<FaultRecord> }> {
  const at = Date.now();
  let backMs: number;
  let workerSurvived: boolean | undefined;
  // The fleet's worker and the user's go down together, as on a machine that crashed.
  if (kind === 'kill-worker') {
    await Promise.all([s.worker!.kill(), s.agentsWorker!.kill()]);
    await Promise.all([s.startWorker(`chaos-${i + 2}`), s.startAgentsWorker(`chaos-user-${i + 2}`)]);
    backMs = Date.now() - at;
  } else {
    const worker = s.worker!;
    const user = s.agentsWorker!;
    await s.restartTemporal();
    await until(
      'the API through the restarted server',
      () => s.status(),
      (v) => v !== null,
      o.timeoutMs,
    );
    backMs = Date.now() - at;
    workerSurvived = worker.alive() && user.alive();
    await Promise.all([
      worker.alive() ? undefined : s.startWorker(`chaos-${i + 2}`),
      user.alive() ? undefined : s.startAgentsWorker(`chaos-user-${i + 2}`),
    ]);
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

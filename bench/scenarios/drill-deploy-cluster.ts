import type { SinkSummary } from '../../src/standins/effectsink/sink';
import { checkSink, startClusterDrillStack } from '../lib/cluster-drill-stack';
import type { LedgerCheck } from '../lib/drill-stack';
import { answerTally, finishAndTally, tallyFailures, submitUnits, until } from '../lib/drill-stack';
import type { DrillOptions } from './drill-deploy';

export interface ClusterDeployStep {
  worker: string;
  inFlightAtDrain: number;
  /** Drain request to `drained` (nothing in flight). */
  drainMs: number;
  /** Admissions counted between the drain and the resume (must be 0). */
  admissionsDuringDrain: number;
  /** Submissions the APIs accepted (202, held) between the drain and the resume. */
  acceptedDuringDeploy: number;
  /** SIGTERM to exit of the old worker, and its exit code. */
  workerStopMs: number;
  workerExit: number | string;
  /** The new worker's spawn to ready. */
  workerStartMs: number;
  /** Resume to the first new admission. */
  timeToResumeMs: number;
  /** Drain request to the first admission after the resume: how long this worker's deploy held the fleet. */
  pauseMs: number;
}

export interface ClusterDeployResult {
  units: number;
  accepted: number;
  lost: number;
  lostRunIds: string[];
  duplicated: number;
  effects: { effects: number; attempts: number; duplicates: number };
  sink: SinkSummary;
  counters: Record<string, number>;
  /** The tenant's ledger against the simulator's bill for it. */
  ledger: LedgerCheck;
  /** Every answer the clients got from the two APIs, by HTTP status (0: network error or timeout). */
  answers: Record<string, number>;
  steps: ClusterDeployStep[];
  seconds: number;
  pass: boolean;
  failures: string[];
}

/**
 * The deploy drill on the cluster: a rolling deploy of the two workers, one at a time: drain with
 * intake `hold` (the APIs go on accepting submissions, queued, not admitted), SIGTERM the old worker
 * (its in-flight steps finish), start its replacement, resume. Clients submit through both APIs
 * throughout: 40 % of the units at the start and a further 10 % at each of drain, worker replaced
 * and resume of each step, so submissions land during every phase of the deploy.
 */
export async function runClusterDeployDrill(o: DrillOptions): Promise<ClusterDeployResult> {
  const log = o.log ?? (() => {});
  const t0 = Date.now();
  const s = await startClusterDrillStack({ concurrency: o.concurrency, log });
  try {
    const token = await s.tenant('drill-deploy', { maxQueued: 100_000, maxInFlight: o.concurrency });
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 10, effect: true };
    let released = Math.floor(o.units * 0.4);
    const release = () => (released = Math.min(o.units, released + Math.ceil(o.units * 0.1)));
    const tally = answerTally();
    let accepted2xx = 0;
    const submitting = submitUnits(s, token, o.units, input, 'deploy', o.timeoutMs, {
      released: () => released,
      onAnswer: (status) => {
        tally.onAnswer(status);
        if (status === 200 || status === 202) accepted2xx++;
      },
    });
    submitting.catch(() => undefined);
    const steps: ClusterDeployStep[] = [];
    for (const [i, share] of [0.2, 0.45].entries()) {
      await until(
        'a busy fleet',
        () => s.status(),
        (st) => st !== null && st.counters.admitted >= o.units * share && st.inFlight >= 1,
        o.timeoutMs,
        50,
      );
      const drainAt = Date.now();
      const drain = await s.call('POST', '/v1/admin/drain', { body: { intake: 'hold' } });
      if (drain.status !== 200) throw new Error(`drain: ${drain.status} ${JSON.stringify(drain.body)}`);
      const acceptedAtDrain = accepted2xx;
      release();
      const atAdmitted = drain.body.counters.admitted as number;
      let maxAdmitted = atAdmitted;
      await until(
        'mode drained',
        () => s.status(),
        (st) => {
          if (st) maxAdmitted = Math.max(maxAdmitted, st.counters.admitted);
          return st?.mode === 'drained';
        },
        o.timeoutMs,
        50,
      );
      const drainMs = Date.now() - drainAt;
      const name = s.workers[i]!.name;
      const stopAt = Date.now();
      const { ms: workerStartMs, exit } = await s.replaceWorker(i, `v2`, { graceful: true });
      const workerStopMs = Date.now() - stopAt - workerStartMs;
      release();
      const st = await until(
        'status',
        () => s.status(),
        (v) => v !== null,
        o.timeoutMs,
      );
      maxAdmitted = Math.max(maxAdmitted, st.counters.admitted);
      const acceptedDuringDeploy = accepted2xx - acceptedAtDrain;
      const resumeAt = Date.now();
      const resumed = await s.call('POST', '/v1/admin/resume');
      if (resumed.status !== 200) throw new Error(`resume: ${resumed.status}`);
      release();
      await until(
        'an admission after resume',
        () => s.status(),
        (v) => v?.counters.admitted > maxAdmitted,
        o.timeoutMs,
        50,
      );
      const step: ClusterDeployStep = {
        worker: name,
        inFlightAtDrain: drain.body.inFlight as number,
        drainMs,
        admissionsDuringDrain: maxAdmitted - atAdmitted,
        acceptedDuringDeploy,
        workerStopMs,
        workerExit: exit,
        workerStartMs,
        timeToResumeMs: Date.now() - resumeAt,
        pauseMs: Date.now() - drainAt,
      };
      log(`rolled ${name}: ${JSON.stringify(step)}`);
      steps.push(step);
    }
    const accepted = await submitting;
    const t = await finishAndTally(s, token, accepted, o.units, o.timeoutMs);
    const { sink, failures: sinkFailures } = await checkSink(s, t.effects.effects, o.units);
    const failures = [...tallyFailures(t, o.units), ...sinkFailures, ...tally.failures()];
    for (const st of steps) {
      if (st.admissionsDuringDrain !== 0)
        failures.push(`${st.admissionsDuringDrain} admissions while draining ${st.worker}`);
      if (st.workerExit !== 0) failures.push(`${st.worker} exited with ${st.workerExit}`);
      if (st.inFlightAtDrain < 1) failures.push(`nothing was in flight when ${st.worker} was drained`);
      if (st.acceptedDuringDeploy < 1)
        failures.push(`no submission was accepted while ${st.worker} was replaced`);
    }
    return {
      units: o.units,
      accepted: accepted.length,
      ...t,
      sink,
      answers: tally.answers,
      steps,
      seconds: (Date.now() - t0) / 1000,
      pass: failures.length === 0,
      failures,
    };
  } finally {
    await s.stop();
  }
}

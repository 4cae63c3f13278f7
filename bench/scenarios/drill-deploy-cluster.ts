import type { SinkSummary } from '../../src/effectsink/sink';
import { startClusterDrillStack } from '../lib/cluster-drill-stack';
import { finishAndTally, submitUnits, until } from '../lib/drill-stack';
import type { DrillOptions } from './drill-deploy';

export interface ClusterDeployStep {
  worker: string;
  inFlightAtDrain: number;
  drainMs: number;
  admissionsDuringDrain: number;
  workerExit: number | string;
  workerStartMs: number;
  timeToResumeMs: number;
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
  steps: ClusterDeployStep[];
  seconds: number;
  pass: boolean;
  failures: string[];
}

/**
 * The deploy drill on the cluster: a rolling deploy of the two workers, one at a time (drain,
 * SIGTERM the old worker, start its v2, resume), while clients submit through both APIs.
 */
export async function runClusterDeployDrill(o: DrillOptions): Promise<ClusterDeployResult> {
  const log = o.log ?? (() => {});
  const t0 = Date.now();
  const s = await startClusterDrillStack({ concurrency: o.concurrency, log });
  try {
    const token = await s.tenant('drill-deploy', { maxQueued: 100_000, maxInFlight: o.concurrency });
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 10, effect: true };
    const submitting = submitUnits(s, token, o.units, input, 'deploy', o.timeoutMs);
    submitting.catch(() => undefined);
    const steps: ClusterDeployStep[] = [];
    for (const [i, share] of [0.25, 0.5].entries()) {
      await until(
        'a busy fleet',
        () => s.status(),
        (st) => st !== null && st.counters.admitted >= o.units * share && st.inFlight >= 1,
        o.timeoutMs,
        50,
      );
      const drainAt = Date.now();
      const drain = await s.call('POST', '/v1/admin/drain', { body: { intake: 'refuse' } });
      if (drain.status !== 200) throw new Error(`drain: ${drain.status} ${JSON.stringify(drain.body)}`);
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
      const { ms: workerStartMs, exit } = await s.replaceWorker(i, `v2`, { graceful: true });
      const st = await until(
        'status',
        () => s.status(),
        (v) => v !== null,
        o.timeoutMs,
      );
      maxAdmitted = Math.max(maxAdmitted, st.counters.admitted);
      const resumeAt = Date.now();
      const resumed = await s.call('POST', '/v1/admin/resume');
      if (resumed.status !== 200) throw new Error(`resume: ${resumed.status}`);
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
        workerExit: exit,
        workerStartMs,
        timeToResumeMs: Date.now() - resumeAt,
      };
      log(`rolled ${name}: ${JSON.stringify(step)}`);
      steps.push(step);
    }
    const accepted = await submitting;
    const t = await finishAndTally(s, token, accepted, o.units, o.timeoutMs);
    const sink = await until(
      'sink count',
      () => s.sink(),
      (x) => x.distinctKeys >= t.effects.effects,
      30_000,
      500,
    ).catch(() => s.sink());
    const failures: string[] = [];
    if (t.lost !== 0) failures.push(`${t.lost} units lost`);
    if (t.duplicated !== 0) failures.push(`${t.duplicated} duplicated`);
    if (t.counters.completed !== o.units) failures.push(`completed ${t.counters.completed} of ${o.units}`);
    if (sink.duplicatedKeys !== 0)
      failures.push(`${sink.duplicatedKeys} keys delivered more than once at the sink`);
    if (sink.distinctKeys !== o.units)
      failures.push(`the sink saw ${sink.distinctKeys} keys for ${o.units} units`);
    for (const st of steps) {
      if (st.admissionsDuringDrain !== 0)
        failures.push(`${st.admissionsDuringDrain} admissions while draining ${st.worker}`);
      if (st.workerExit !== 0) failures.push(`${st.worker} exited with ${st.workerExit}`);
    }
    return {
      units: o.units,
      accepted: accepted.length,
      ...t,
      sink,
      steps,
      seconds: (Date.now() - t0) / 1000,
      pass: failures.length === 0,
      failures,
    };
  } finally {
    await s.stop();
  }
}

import { Client, Connection } from '@temporalio/client';
import type { CallLogSummary } from '../../src/standins/modelplane/call-log';
import type { SinkSummary } from '../../src/standins/effectsink/sink';
import type { LedgerCheck } from '../lib/drill-stack';
import {
  answerTally,
  completedRunIds,
  finishAndTally,
  tallyFailures,
  simAdmin,
  startDrillStack,
  submitUnits,
  until,
} from '../lib/drill-stack';
import { newChainAfter, terminateScheduler } from '../lib/scheduler-loss';

/**
 * The drill's one-off calls (the trigger, the drain, the refused submission, the resume) wait this long
 * for their answer, longer than the API's own wait for the scheduler: a loaded machine answers late,
 * and a call cut by the client's timeout would read as a failure of the drain.
 */
const ANSWER_MS = 60_000;

export interface DrillOptions {
  units: number;
  concurrency: number;
  steps: number;
  stepMs: number;
  /** Bound on every wait; a drill that overruns it fails rather than hangs. */
  timeoutMs: number;
  log?: (m: string) => void;
  /** Called with every scheduler status the drill reads (progress reporting). */
  onStatus?: (status: any) => void;
}

export interface DeployDrillOptions extends DrillOptions {
  /**
   * The upgrade across a change that is not replay-safe (CONTRIBUTING.md): with the old worker
   * stopped, the scheduler is terminated and a new chain starts through the recovery path, before
   * the new worker starts.
   */
  terminateScheduler?: boolean;
  /**
   * The dev server keeps its state in memory instead of a SQLite file (no fsync per write). The drill
   * never restarts Temporal, so nothing it checks depends on the file.
   */
  inMemory?: boolean;
}

export interface DeployDrillResult {
  units: number;
  accepted: number;
  /**
   * Events sent throughout the drain, stop, deploy and start (one a second), those answered 2xx, and
   * their runs: each must complete once, counted at the sink with the units' effects.
   */
  events: { sent: number; answered: number; runs: number };
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
  /** In flight and admitted when the drain began. */
  atDrain: { inFlight: number; admitted: number; completed: number };
  /** Admissions counted between the drain and the resume (must be 0). */
  admissionsDuringDrain: number;
  /** What a submission met at the door while draining. */
  refused: { status: number; code: string | undefined; retryAfter: number };
  drainMs: number;
  /** SIGTERM to exit of the v1 worker, and its exit code. */
  workerStopMs: number;
  workerExit: number | string;
  /** v2 worker spawn to ready. */
  workerStartMs: number;
  /** Terminate to a new scheduler chain running (with `terminateScheduler`). */
  newChainMs?: number;
  /** Resume to the first new admission, and to the first completion after it. */
  timeToResumeMs: number;
  timeToFirstCompletionMs: number;
  seconds: number;
  pass: boolean;
  failures: string[];
}

/**
 * Issue 6's deploy drill: N units with an effect each, many in flight; drain (refuse at the door);
 * wait for `drained`; SIGTERM the v1 worker (in-flight steps finish, nothing is cancelled); start a
 * v2 worker; resume; every unit completes exactly once. Events keep arriving the whole time (the
 * webhooks a deploy does not stop): every event answered 2xx has its run complete exactly once.
 */
export async function runDeployDrill(o: DeployDrillOptions): Promise<DeployDrillResult> {
  const log = o.log ?? (() => {});
  const t0 = Date.now();
  const s = await startDrillStack({
    concurrency: o.concurrency,
    log,
    onStatus: o.onStatus,
    sink: true,
    ...(o.inMemory ? { inMemory: true } : {}),
  });
  try {
    await s.startWorker('v1');
    const token = await s.tenant('drill-deploy', { maxQueued: 100_000, maxInFlight: o.concurrency });
    const input = { steps: o.steps, stepMs: o.stepMs, tokensPerStep: 10, effect: true };
    // Clients keep submitting through the deploy; those refused at the door try again after Retry-After.
    const answers = answerTally();
    const submitting = submitUnits(s, token, o.units, input, 'deploy', o.timeoutMs, answers);
    submitting.catch(() => undefined);
    const trigger = { eventType: 'deploy.webhook', agent: 'synthetic', input };
    const put = await s.call('PUT', '/v1/triggers/webhook', { token, body: trigger, timeoutMs: ANSWER_MS });
    if (put.status !== 201) throw new Error(`trigger: ${put.status} ${JSON.stringify(put.body)}`);
    const events = eventStream(s, token);

    // Drain mid-run: a quarter admitted and the fleet busy.
    await until(
      'a busy fleet',
      () => s.status(),
      (st) => st !== null && st.counters.admitted >= o.units / 4 && st.inFlight >= o.concurrency / 2,
      o.timeoutMs,
      50,
    );
    const drainAt = Date.now();
    const drain = await s.call('POST', '/v1/admin/drain', {
      body: { intake: 'refuse' },
      timeoutMs: ANSWER_MS,
    });
    if (drain.status !== 200) throw new Error(`drain: ${drain.status} ${JSON.stringify(drain.body)}`);
    const atDrain = {
      inFlight: drain.body.inFlight as number,
      admitted: drain.body.counters.admitted as number,
      completed: drain.body.counters.completed as number,
    };
    log(`drain: ${atDrain.inFlight} in flight, ${atDrain.admitted} admitted`);
    const r = await s.call('POST', '/v1/runs', {
      token,
      body: { agent: 'synthetic', input },
      timeoutMs: ANSWER_MS,
    });
    const refused = {
      status: r.status,
      code: r.body?.error?.code as string | undefined,
      retryAfter: Number(r.headers.get('retry-after') ?? 0),
    };
    let maxAdmitted = atDrain.admitted;
    const drained = await until(
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
    log(`drained in ${drainMs} ms (${drained.counters.completed - atDrain.completed} finished meanwhile)`);

    const stopAt = Date.now();
    const workerExit = await s.worker!.stop();
    const workerStopMs = Date.now() - stopAt;
    const newChainMs = o.terminateScheduler ? await replaceChain(s, log) : undefined;
    const startAt = Date.now();
    await s.startWorker('v2');
    const workerStartMs = Date.now() - startAt;
    const before = await until(
      'status from v2',
      () => s.status(),
      (st) => st !== null,
      o.timeoutMs,
    );
    // A new chain counts from zero: admissions after the resume are those beyond its own.
    const admittedBefore = o.terminateScheduler
      ? before.counters.admitted
      : Math.max(maxAdmitted, before.counters.admitted);
    if (!o.terminateScheduler) maxAdmitted = admittedBefore;
    log(`v2 answers: mode ${before.mode}, admitted ${before.counters.admitted}`);

    const resumeAt = Date.now();
    const resumed = await s.call('POST', '/v1/admin/resume', { timeoutMs: ANSWER_MS });
    if (resumed.status !== 200) throw new Error(`resume: ${resumed.status} ${JSON.stringify(resumed.body)}`);
    await until(
      'an admission after resume',
      () => s.status(),
      (st) => st?.counters.admitted > admittedBefore,
      o.timeoutMs,
      50,
    );
    const timeToResumeMs = Date.now() - resumeAt;
    log(`resumed: first admission after ${timeToResumeMs} ms`);
    await until(
      'a completion after resume',
      () => s.status(),
      (st) => st?.counters.completed > before.counters.completed,
      o.timeoutMs,
      50,
    );
    const timeToFirstCompletionMs = Date.now() - resumeAt;
    const accepted = await submitting;
    const sent = await events.stop();
    log(`all ${accepted.length} units accepted; ${sent.runs.length} event runs from ${sent.sent} events`);
    const all = [...accepted, ...sent.runs];
    const t = o.terminateScheduler
      ? await finishAcrossChains(s, token, all, o.timeoutMs)
      : await finishAndTally(s, token, all, all.length, o.timeoutMs);
    const sink = await s.sink();
    const calls = await simAdmin<CallLogSummary>(s.simUrl, 'calls');

    const failures = [...tallyFailures(t, all.length), ...answers.failures()];
    if (sent.answered !== sent.sent) failures.push(`${sent.sent - sent.answered} events not answered 2xx`);
    if (sent.sent < 5) failures.push(`only ${sent.sent} events arrived during the deploy`);
    const admissionsDuringDrain = maxAdmitted - atDrain.admitted;
    if (admissionsDuringDrain !== 0) failures.push(`${admissionsDuringDrain} admissions while draining`);
    if (atDrain.inFlight < 1) failures.push('nothing was in flight at the drain');
    if (refused.status !== 503 || refused.code !== 'draining' || refused.retryAfter < 1)
      failures.push(`refuse answered ${refused.status} ${refused.code} Retry-After ${refused.retryAfter}`);
    if (workerExit !== 0) failures.push(`v1 worker exited with ${workerExit}`);
    return {
      units: o.units,
      accepted: accepted.length,
      events: { sent: sent.sent, answered: sent.answered, runs: sent.runs.length },
      ...t,
      sink,
      calls,
      answers: answers.answers,
      atDrain,
      admissionsDuringDrain,
      refused,
      drainMs,
      workerStopMs,
      workerExit,
      workerStartMs,
      ...(newChainMs === undefined ? {} : { newChainMs }),
      timeToResumeMs,
      timeToFirstCompletionMs,
      seconds: (Date.now() - t0) / 1000,
      pass: failures.length === 0,
      failures,
    };
  } finally {
    await s.stop();
  }
}

/** Terminates the scheduler chain (as an operator does with the CLI) and waits for its successor. */
async function replaceChain(s: Awaited<ReturnType<typeof startDrillStack>>, log: (m: string) => void) {
  const connection = await Connection.connect({ address: s.temporalAddress });
  try {
    const handle = new Client({ connection }).workflow.getHandle(s.schedulerWorkflowId);
    const old = await handle.describe();
    const at = Date.now();
    await terminateScheduler(s.temporalAddress, s.schedulerWorkflowId, old.runId);
    const next = await newChainAfter(() => handle.describe(), old.runId, at);
    log(`scheduler terminated; a new chain runs after ${next.ms} ms`);
    return next.ms;
  } finally {
    await connection.close();
  }
}

/**
 * Waits until every accepted unit completed (visibility, read through the API) and tallies as
 * `finishAndTally` does. A new chain counts only what it saw itself, so its `completed` counter is
 * replaced by the count of completed units; the ledger is the new chain's after its recovery floors.
 */
async function finishAcrossChains(
  s: Awaited<ReturnType<typeof startDrillStack>>,
  token: string,
  accepted: string[],
  timeoutMs: number,
): ReturnType<typeof finishAndTally> {
  await until(
    'every unit completed',
    () => completedRunIds(s, token),
    (done) => accepted.every((id) => done.has(id)),
    timeoutMs,
    500,
  );
  const t = await finishAndTally(s, token, accepted, 0, timeoutMs);
  const done = await completedRunIds(s, token);
  return { ...t, counters: { ...t.counters, completed: accepted.filter((id) => done.has(id)).length } };
}

/**
 * Sends one event a second (the tenant's webhook, each with its own id) until stopped; returns how
 * many were sent, how many answered 2xx, and the runs those answers named. An event the API could not
 * take (no answer, 5xx) is sent again with the same id, as a webhook sender does.
 */
function eventStream(s: Awaited<ReturnType<typeof startDrillStack>>, token: string) {
  let stopped = false;
  let sent = 0;
  let answered = 0;
  const runs: string[] = [];
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const body = {
        specversion: '1.0',
        id: `deploy-evt-${i}`,
        type: 'deploy.webhook',
        source: 'drill',
        data: {},
      };
      sent++;
      for (let tries = 0; tries < 20; tries++) {
        const r = await s.call('POST', '/v1/events', { token, body });
        if (r.status === 200 || r.status === 202) {
          answered++;
          for (const run of r.body.runs as { runId: string }[]) runs.push(run.runId);
          break;
        }
        await new Promise((res) => setTimeout(res, 1000));
      }
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { sent, answered, runs: [...new Set(runs)] };
    },
  };
}

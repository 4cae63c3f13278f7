import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  upsertMemo,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { FleetActivities } from '../activities/types';
import type { RunSpec, RunView } from '../contract/fleet-port';
import { stepWorstCase } from '../contract/model-call';
import type { ReleaseOutcome } from '../scheduler/types';
import type { GatePolicy } from '../agents/gates';
import { runAgent } from './agents';
import type { AgentContext } from './agents';
import {
  admitSignal,
  budgetRefusedSignal,
  cancelRunSignal,
  decisionSignal,
  leaseRevokedSignal,
  reofferSignal,
  runSpecQuery,
  runViewQuery,
} from './run-messages';
import { RunState } from './run-state';
import { callTool } from './tools';

/** How a queued run checks on the scheduler (from config; a run started without them takes the defaults). */
export interface RunOptions {
  /** The first check on the scheduler comes this long after the start, if no admission came. */
  reofferFirstSeconds: number;
  /** Backoff cap between checks while still not admitted. */
  reofferMaxSeconds: number;
  /** Each gated agent's gate timeout and its outcome (a gate without one waits forever). */
  gates?: Record<string, GatePolicy>;
}
const DEFAULT_RUN_OPTIONS: RunOptions = { reofferFirstSeconds: 300, reofferMaxSeconds: 1800 };
/** Never re-offer sooner than this, whatever a refusal's Retry-After says (0 would spin). */
const REOFFER_FLOOR_MS = 5_000;

/** Failures that retrying cannot fix: the run fails with the reason. */
export const NON_RETRYABLE = ['AgentStepFailed', 'ModelSpendCap', 'ModelRequestRejected'];

const remote = proxyActivities<FleetActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  // maximumInterval bounds nextRetryDelay, so it must allow the provider's Retry-After.
  retry: { initialInterval: '1s', maximumInterval: '2 minutes', nonRetryableErrorTypes: NON_RETRYABLE },
});
const local = proxyLocalActivities<FleetActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200ms', maximumInterval: '5s' },
});
/**
 * Short steps run as local activities: no task-queue round trip and a few history events instead
 * of a dozen, which is what bounds a single dev server's throughput. Longer steps stay regular
 * activities: they heartbeat, survive a worker's death mid-step, and do not hold the workflow task
 * open (signals such as cancel are delivered only when it closes).
 */
const shortStep = proxyLocalActivities<FleetActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '2 minutes', nonRetryableErrorTypes: NON_RETRYABLE },
});
const SHORT_STEP_MS = 250;
/**
 * A waiting run's check on the scheduler is a regular activity, not a local one: it waits on the
 * scheduler (a query, maybe an update), and a local activity would hold the run's workflow task, and
 * a worker slot, meanwhile; with thousands of runs checking, the scheduler's own tasks would starve.
 */
const checks = proxyActivities<FleetActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5s', maximumInterval: '1 minute' },
});

class RunCancelled extends Error {}

function failureOf(err: unknown): { code: string; message: string; usedTokens: number } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0] as { usedTokens?: number } | undefined;
    const code = (cause.type ?? 'error').replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
    return { code, message: cause.message, usedTokens: details?.usedTokens ?? 0 };
  }
  return { code: 'error', message: err instanceof Error ? err.message : String(err), usedTokens: 0 };
}

/**
 * One agent run: waits for the scheduler's admission, runs the agent's steps under its lease, gives
 * the slot back with the tokens it used. Queued at start by the API (attempt 0).
 */
export async function runWorkflow(spec: RunSpec, options?: RunOptions): Promise<RunView> {
  const opts = { ...DEFAULT_RUN_OPTIONS, ...options };
  const state = new RunState(spec);
  setHandler(admitSignal, (n) => state.admit(n));
  setHandler(leaseRevokedSignal, (r) => state.revoke(r.attempt));
  setHandler(cancelRunSignal, () => void (state.cancelRequested = true));
  let nudged = false;
  setHandler(reofferSignal, () => void (nudged = true));
  // Why the scheduler refused this run for good while it waited (its tenant's budget cannot cover it).
  let budgetRefusal: string | null = null;
  const failsOnBudget = (spec.onBudgetExhausted ?? 'fail') === 'fail';
  setHandler(budgetRefusedSignal, (r) => {
    if (state.admission !== null || r?.attempt !== state.attempt) return; // stale
    // A `park` run (its tenant's setting changed since it was accepted) offers itself again and waits.
    if (failsOnBudget) budgetRefusal = String(r.message);
    else nudged = true;
  });
  setHandler(decisionSignal, (d) => {
    if (state.status === 'awaiting_approval' && !state.decision) state.decision = d;
  });
  setHandler(runViewQuery, () => state.view());
  setHandler(runSpecQuery, () => spec);

  const settled = () => state.admission !== null || state.cancelRequested || budgetRefusal !== null;
  /**
   * Waits for the admission. While it does not come, the run checks that the scheduler knows
   * it and re-offers itself when not (the scheduler was lost or reset, or the submitter died between
   * start and submit), backing off ×2 up to the cap; the check is a query, batched per worker.
   */
  const awaitAdmission = async (checkNow: boolean): Promise<void> => {
    const maxMs = opts.reofferMaxSeconds * 1000;
    // The first check is spread over [1, 2)× the first interval, so a batch started together does not
    // check together; later ones back off ×2 with ±10% jitter.
    let wait = Math.min(maxMs, opts.reofferFirstSeconds * 1000 * (1 + jitter));
    for (let check = checkNow; !settled(); check = true) {
      if (check) {
        nudged = false;
        // A revoke that overtook its admission means the admission may never come: ask anew now.
        if (state.revokedEarly >= state.attempt) state.requeue();
        let r = await checks.offerRun(unit(state.attempt));
        if (r.state === 'ended') {
          // The scheduler saw this attempt end (revoked before its admission reached us): ask anew.
          state.requeue();
          r = await checks.offerRun(unit(state.attempt));
        }
        // A single run (not a batch's item, which its batch offers again) refused for its budget on a
        // re-offer (the scheduler lost it meanwhile) ends like a queued unit the budget cannot cover.
        if (
          r.state === 'refused' &&
          r.code === 'budget_exhausted' &&
          failsOnBudget &&
          spec.batchId === undefined
        ) {
          budgetRefusal = r.message ?? 'Tenant budget exhausted.';
          break;
        }
        if (r.state === 'refused' || r.state === 'unavailable')
          wait = Math.min(maxMs, Math.max(wait, REOFFER_FLOOR_MS, r.retryAfterSeconds * 1000));
      }
      // ±10% jitter (from the run id, deterministic) so runs started together do not all check at once.
      if (
        await condition(
          () => settled() || nudged || state.revokedEarly >= state.attempt,
          Math.round(wait * (0.9 + jitter * 0.2)),
        )
      ) {
        if (settled()) break;
        wait = Math.min(maxMs, opts.reofferFirstSeconds * 1000); // nudged: check now, back off anew
        continue;
      }
      wait = Math.min(maxMs, wait * 2);
    }
  };
  let hash = 0;
  for (let i = 0; i < spec.runId.length; i++) hash = (hash * 31 + spec.runId.charCodeAt(i)) >>> 0;
  const jitter = (hash % 1000) / 1000;
  // A retry says what the run used so far (a recovering scheduler that lost the run counts it
  // against the budget).
  const usage = (attempt: number) => (attempt > 0 && state.usage > 0 ? { usedTokens: state.usage } : {});
  const unit = (attempt: number) => ({
    runId: spec.runId,
    tenant: spec.tenant,
    priority: spec.priority,
    cost: Math.max(1, spec.estimatedTokens - state.usage),
    attempt,
    ...usage(attempt),
  });
  const waitForSlot = async (checkNow = false): Promise<void> => {
    await awaitAdmission(checkNow);
    if (!state.admission && !state.cancelRequested && budgetRefusal !== null)
      throw ApplicationFailure.create({
        type: 'BudgetExhausted',
        message: budgetRefusal,
        nonRetryable: true,
      });
    if (!state.admission) {
      await local.cancelQueued(spec.runId);
      throw new RunCancelled();
    }
    state.transition('running', Date.now());
  };
  const queueAgain = async (atLeast = 1): Promise<void> => {
    state.requeue();
    state.transition('queued', Date.now());
    const cost = Math.max(atLeast, spec.estimatedTokens - state.usage, 1);
    state.offeredCost = cost;
    for (;;) {
      const r = await local.resubmit({
        runId: spec.runId,
        tenant: spec.tenant,
        priority: spec.priority,
        cost,
        attempt: state.attempt,
        ...usage(state.attempt),
      });
      if (r.accepted) break;
      await sleep(Math.max(REOFFER_FLOOR_MS, r.retryAfterSeconds * 1000));
    }
    await waitForSlot();
  };
  const release = async (outcome: ReleaseOutcome): Promise<void> => {
    if (!state.admission) return;
    await local.releaseLease({
      runId: spec.runId,
      attempt: state.attempt,
      usedTokens: state.attemptUsage,
      outcome,
      tenant: spec.tenant,
    });
    state.admission = null;
  };

  /**
   * Makes the current attempt's reservation cover `worst` more tokens: asks
   * for a top-up when it does not; on refusal the run queues again (its lease is gone) or, the budget
   * being spent, parks or fails per its tenant's setting. Counts `worst` as under way when it returns.
   */
  const cover = async (worst: number): Promise<void> => {
    for (;;) {
      if (state.cancelRequested) throw new RunCancelled();
      if (state.revoked) await queueAgain(worst + state.stepsWorst);
      const need = state.uncovered + worst;
      if (need <= 0) break;
      const attempt = state.attempt;
      const r = await checks.requestTopUp({ runId: spec.runId, attempt, tokens: need });
      if (state.attempt !== attempt) continue; // revoked and queued again meanwhile: ask anew
      if (r.granted) {
        state.reserved += need;
        break;
      }
      if (r.code === 'no_lease') {
        // The scheduler holds no lease for this attempt (it expired; its revoke may be on its way).
        state.revoked = true;
        continue;
      }
      const why =
        `Tenant ${spec.tenant}'s token budget cannot cover the run's next step: ` +
        `${need} tokens asked, ${r.remaining} left`;
      if ((spec.onBudgetExhausted ?? 'fail') === 'fail')
        throw ApplicationFailure.create({ type: 'BudgetExhausted', message: `${why}.`, nonRetryable: true });
      // Park: give the slot back and queue again for what the step needs; the scheduler admits the run
      // when the budget covers it (the period rolled or the budget was raised): `waitingOn: budget`.
      await release('gated');
      await queueAgain(worst + state.stepsWorst);
    }
    state.stepsWorst += worst;
  };
  // Steps of one run reserve one after another, so parallel steps do not ask twice for the same tokens.
  let reserving: Promise<void> = Promise.resolve();
  const reserveFor = (worst: number): Promise<void> => {
    const p = reserving.then(() => cover(worst));
    reserving = p.catch(() => undefined);
    return p;
  };

  let stepNo = 0;
  let toolNo = 0;
  const ctx: AgentContext = {
    step: async (tokens, opts) => {
      if (state.cancelRequested) throw new RunCancelled();
      // Before each step whose worst case its reservation does not cover, the run asks the scheduler
      // for a top-up; refused, it parks or fails with budget_exhausted (tenant setting).
      const step = ++stepNo;
      const worst = stepWorstCase(spec.runId, step, tokens);
      await reserveFor(worst);
      const a = state.admission;
      try {
        const call = (opts?.minMs ?? 0) <= SHORT_STEP_MS ? shortStep.modelStep : remote.modelStep;
        const r = await call({
          runId: spec.runId,
          attempt: state.attempt,
          step,
          tokens,
          minMs: opts?.minMs ?? 0,
          usedSoFar: state.attemptUsage,
          leaseTtlMs: a ? a.leaseExpiresAt - a.admittedAt : 60_000,
          tenant: spec.tenant,
          priority: spec.priority,
          cost: Math.max(1, spec.estimatedTokens),
          ...(opts?.fail ? { fail: true } : {}),
        });
        state.used(r.usedTokens);
        return r.usedTokens;
      } catch (err) {
        state.used(failureOf(err).usedTokens);
        throw err;
      } finally {
        state.stepsWorst -= worst;
      }
    },
    // One keyed write: a local activity (one marker event); the store applies each key once however often it runs.
    effect: async (name) =>
      (await local.applyEffect({ key: `${spec.runId}:${name}`, runId: spec.runId })).applied,
    tool: async (name, args, key) => {
      if (state.cancelRequested) throw new RunCancelled();
      const n = ++toolNo;
      return callTool(
        {
          agent: spec.agent,
          runId: spec.runId,
          tool: name,
          key: `${spec.runId}:${key ?? `${name}-${n}`}`,
          args,
        },
        (entry) => state.toolCalls.push(entry),
      );
    },
    gate: async () => {
      // A human may take hours: do not hold a fleet slot meanwhile. The release is the gate's own
      // outcome, not a completion: the run is not finished.
      await release('gated');
      state.transition('awaiting_approval', Date.now());
      const decided = () => state.decision !== null || state.cancelRequested;
      const policy = opts.gates?.[spec.agent];
      // A gate waits at most its agent's timeout, then takes the declared outcome.
      if (policy) {
        if (!(await condition(decided, policy.timeoutSeconds * 1000))) {
          const reject = policy.onTimeout === 'reject';
          state.decision = {
            decision: reject ? 'reject' : 'approve',
            note: `gate timed out: ${policy.onTimeout}`,
          };
          state.gateTimedOut = policy.onTimeout;
        }
      } else await condition(decided);
      if (!state.decision) throw new RunCancelled();
      await queueAgain();
      return state.decision;
    },
  };

  let outcome: ReleaseOutcome = 'completed';
  try {
    await waitForSlot();
    state.result = await runAgent(spec.agent, spec.input, ctx);
  } catch (err) {
    if (err instanceof RunCancelled) outcome = 'cancelled';
    else {
      outcome = 'failed';
      const f = failureOf(err);
      state.error = { code: f.code, message: f.message };
    }
  }
  await release(outcome);
  state.transition(outcome, Date.now());
  // The run's token usage in its memo, where the Web UI and visibility listings show it.
  upsertMemo({ usageTokens: state.usage });
  if (outcome === 'failed' && state.error) {
    throw ApplicationFailure.create({
      type: 'RunFailed',
      message: state.error.message,
      nonRetryable: true,
      details: [state.view()],
    });
  }
  return state.view();
}

import { ApplicationFailure, sleep } from '@temporalio/workflow';
import type { GatePolicy } from '../agents/gates';
import type { RunSpec } from '../contract/fleet-port';
import type { ReleaseOutcome } from '../scheduler/types';
import { awaitAdmission, REOFFER_FLOOR_MS } from './run-admission';
import { local } from './run-activities';
import { RunCancelled } from './run-failure';
import { RunState } from './run-state';

/** How a queued run checks on the scheduler (from config; a run started without them takes the defaults). */
export interface RunOptions {
  /** The first check on the scheduler comes this long after the start, if no admission came. */
  reofferFirstSeconds: number;
  /** Backoff cap between checks while still not admitted. */
  reofferMaxSeconds: number;
  /** Each gated agent's gate timeout and its outcome (a gate without one waits forever). */
  gates?: Record<string, GatePolicy>;
  /**
   * The start-to-close timeout of a short step and of a `ctx.model` call (MODEL_CALL_TIMEOUT_SECONDS).
   * Absent (a run started before the setting): 1 minute for a short step, 15 for a `ctx.model` call.
   */
  modelCallTimeoutSeconds?: number;
  /** A user's effect function is attempted at most this many times (EFFECT_MAX_ATTEMPTS); absent: its default. */
  effectMaxAttempts?: number;
  /** One attempt of a user's effect function may take this long (EFFECT_TIMEOUT_SECONDS); absent: its default. */
  effectTimeoutSeconds?: number;
}
const DEFAULT_RUN_OPTIONS: RunOptions = { reofferFirstSeconds: 300, reofferMaxSeconds: 1800 };

/** A number in [0, 1) from the run id: deterministic, and different for runs started together. */
function jitterOf(runId: string): number {
  let hash = 0;
  for (let i = 0; i < runId.length; i++) hash = (hash * 31 + runId.charCodeAt(i)) >>> 0;
  return (hash % 1000) / 1000;
}

/**
 * A run's side of the admission protocol: it waits for the scheduler's admission, checks on the
 * scheduler and offers itself again while none comes, queues again after a revoke, a gate or a
 * parked top-up, and gives its slot back. The signals that reach it set `nudged` and `budgetRefusal`.
 */
export class RunLifecycle {
  readonly opts: RunOptions;
  readonly state: RunState;
  /** The scheduler (or the watchdog) asked this run to check on it now. */
  nudged = false;
  /** Why the scheduler refused this run for good while it waited (its tenant's budget cannot cover it). */
  budgetRefusal: string | null = null;
  readonly failsOnBudget: boolean;
  /** In [0, 1), from the run id: spreads the checks of runs started together. */
  readonly jitter: number;

  constructor(
    readonly spec: RunSpec,
    options: RunOptions | undefined,
  ) {
    this.opts = { ...DEFAULT_RUN_OPTIONS, ...options };
    this.state = new RunState(spec);
    this.failsOnBudget = (spec.onBudgetExhausted ?? 'fail') === 'fail';
    this.jitter = jitterOf(spec.runId);
  }

  /** Admitted, cancelled, or refused for good: the wait for an admission is over. */
  settled(): boolean {
    return this.state.admission !== null || this.state.cancelRequested || this.budgetRefusal !== null;
  }

  /** What the run offers the scheduler for `attempt`; a retry says what the run used so far. */
  unit(attempt: number) {
    const { spec, state } = this;
    return {
      runId: spec.runId,
      tenant: spec.tenant,
      priority: spec.priority,
      cost: Math.max(1, spec.estimatedTokens - state.usage),
      ...(spec.pool ? { pool: spec.pool } : {}),
      ...(spec.fairnessKey ? { fairnessKey: spec.fairnessKey } : {}),
      attempt,
      ...this.usage(attempt),
    };
  }

  /** A recovering scheduler that lost the run counts what a retry used against the budget. */
  private usage(attempt: number) {
    return attempt > 0 && this.state.usage > 0 ? { usedTokens: this.state.usage } : {};
  }

  /** Waits for the admission and starts running; a refusal fails the run, a cancel cancels it. */
  async waitForSlot(checkNow = false): Promise<void> {
    const { state, spec } = this;
    await awaitAdmission(this, checkNow);
    if (!state.admission && !state.cancelRequested && this.budgetRefusal !== null)
      throw ApplicationFailure.create({
        type: 'BudgetExhausted',
        message: this.budgetRefusal,
        nonRetryable: true,
      });
    if (!state.admission) {
      await local.cancelQueued(spec.runId);
      throw new RunCancelled();
    }
    state.transition('running', Date.now());
  }

  /** Starts a new attempt at a cost of at least `atLeast`, offers it until accepted, and waits for its slot. */
  async queueAgain(atLeast = 1): Promise<void> {
    const { state, spec } = this;
    state.requeue();
    state.transition('queued', Date.now());
    const cost = Math.max(atLeast, spec.estimatedTokens - state.usage, 1);
    state.offeredCost = cost;
    for (;;) {
      // The unit it offers anew, at the cost it now needs (its pool and key as ever).
      const r = await local.resubmit({ ...this.unit(state.attempt), cost });
      if (r.accepted) break;
      await sleep(Math.max(REOFFER_FLOOR_MS, r.retryAfterSeconds * 1000));
    }
    await this.waitForSlot();
  }

  /** Gives the slot back with what the attempt used (nothing to do without an admission). */
  async release(outcome: ReleaseOutcome): Promise<void> {
    const { state, spec } = this;
    if (!state.admission) return;
    await local.releaseLease({
      runId: spec.runId,
      attempt: state.attempt,
      usedTokens: state.attemptUsage,
      outcome,
      tenant: spec.tenant,
    });
    state.admission = null;
  }
}

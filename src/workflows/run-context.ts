import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  patched,
  sleep,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { GATE_TIMEOUT_OUTCOMES } from '../agent/define';
import type { Agent, AgentContext, GateOptions } from '../agent/define';
import { DEFAULT_GATE } from '../agents/gates';
import type { GatePolicy } from '../agents/gates';
import type { ModelCallResult } from '../contract/activity-types';
import type { RunGateView } from '../contract/fleet-port';
import { stepWorstCase } from '../contract/model-call';
import { isJsonData } from '../contract/json-data';
import { MAX_TOKENS } from '../scheduler/limits';
import {
  DEFAULT_EFFECT_MAX_ATTEMPTS,
  DEFAULT_EFFECT_TIMEOUT_SECONDS,
  EFFECT_FAILED,
} from '../contract/effect-policy';
import {
  agentEffectsFor,
  local,
  measure,
  modelCallsFor,
  longStepsFor,
  SHORT_STEP_MS,
  shortStepsFor,
} from './run-activities';
import { failureOf, RunCancelled } from './run-failure';
import { interruptible } from './run-cancel';
import { PATCH } from './patches';
import type { RunLifecycle, RunOptions } from './run-lifecycle';
import { modelCallFailure } from './run-model-call';
import { Reservation } from './run-reservation';
import { baseTaskQueueOf, callTool } from './tools';

/** The name of the fleet's own once-only effect record: every agent may apply it, undeclared. */
export const BUILT_IN_EFFECT = 'effect';

/**
 * A gate's timeout and outcome: the call's own, else the run options' policy for a built-in agent
 * (GATE_TIMEOUT_SECONDS applied), else the agent's declared `gate`, else the options' default
 * (GATE_TIMEOUT_SECONDS, rejecting); without any, the gate waits until decided.
 */
export function gatePolicyOf(
  opts: RunOptions,
  agent: Agent,
  g: GateOptions,
): Pick<RunGateView, 'timeoutSeconds' | 'onTimeout'> {
  const configured = (name: string): GatePolicy | undefined =>
    opts.gates && Object.hasOwn(opts.gates, name) ? opts.gates[name] : undefined;
  const policy = configured(agent.name) ?? agent.gate ?? configured(DEFAULT_GATE);
  const timeoutSeconds = g.timeoutSeconds ?? policy?.timeoutSeconds ?? null;
  if (timeoutSeconds !== null && !(Number.isFinite(timeoutSeconds) && timeoutSeconds > 0))
    throw ApplicationFailure.create({
      type: 'InvalidGate',
      message: `agent "${agent.name}": a gate's timeoutSeconds must be a positive number, not ${timeoutSeconds}`,
      nonRetryable: true,
    });
  const onTimeout = g.onTimeout ?? policy?.onTimeout ?? 'reject';
  if (!(GATE_TIMEOUT_OUTCOMES as readonly string[]).includes(onTimeout))
    throw ApplicationFailure.create({
      type: 'InvalidGate',
      message: `agent "${agent.name}": a gate's onTimeout must be one of ${GATE_TIMEOUT_OUTCOMES.join(', ')}, not ${JSON.stringify(onTimeout)}`,
      nonRetryable: true,
    });
  return { timeoutSeconds, onTimeout };
}

/** Refuses a step's tokens or a call's maxTokens that is not a whole number in [lo, MAX_TOKENS] (the scheduler's bound). */
function checkTokens(agent: string, what: string, n: unknown, lo: number): void {
  if (typeof n === 'number' && Number.isInteger(n) && n >= lo && n <= MAX_TOKENS) return;
  throw ApplicationFailure.create({
    type: 'InvalidTokens',
    message: `agent "${agent}": ${what} must be a whole number from ${lo} to ${MAX_TOKENS}, not ${String(n)}`,
    nonRetryable: true,
  });
}

/** Tokens a model call was charged: what the provider reported, its worst case when that is unreadable. */
function chargedOf(r: ModelCallResult): number {
  const t: unknown = r.completion.usage?.totalTokens;
  return typeof t === 'number' && Number.isFinite(t) && t >= 0 ? Math.ceil(t) : r.reservedTokens;
}

/**
 * What an agent's code can do inside its run (the public AgentContext): model calls and steps under
 * the run's lease, reserved at their worst case first; its declared tools; a gate; effects.
 */
export function agentContext(run: RunLifecycle, agent: Agent): AgentContext {
  const { spec, state, opts } = run;
  const reservation = new Reservation(run);
  // Steps and model calls share one numbering: with the run id, the key the call ledger tells calls apart by.
  let stepNo = 0;
  let toolNo = 0;
  const lease = () => {
    const a = state.admission;
    return {
      runId: spec.runId,
      attempt: state.attempt,
      usedSoFar: state.attemptUsage,
      leaseTtlMs: a ? a.leaseExpiresAt - a.admittedAt : 60_000,
      tenant: spec.tenant,
      priority: spec.priority,
      cost: Math.max(1, spec.estimatedTokens),
      ...(spec.pool ? { pool: spec.pool } : {}),
    };
  };
  /** Reserves `worst`, runs the call, counts what it used (a failed call: what `failedUsed` says it may be charged). */
  const metered = async <R>(
    worst: number,
    call: () => Promise<R>,
    used: (r: R) => number,
    failedUsed: (err: unknown) => number = (err) => failureOf(err).usedTokens,
  ): Promise<R> => {
    await reservation.reserveFor(worst);
    try {
      const r = await call();
      state.used(used(r));
      return r;
    } catch (err) {
      state.used(failedUsed(err));
      throw err;
    } finally {
      state.stepsWorst -= worst;
    }
  };

  return {
    runId: spec.runId,
    tenant: spec.tenant,

    step: async (tokens, stepOpts) => {
      if (state.cancelRequested) throw new RunCancelled();
      checkTokens(agent.name, 'ctx.step tokens', tokens, 0);
      const step = ++stepNo;
      const minMs = stepOpts?.minMs ?? 0;
      const r = await metered(
        stepWorstCase(spec.runId, step, tokens),
        () => {
          const l = lease();
          const args = { ...l, step, tokens, minMs, ...(stepOpts?.fail ? { fail: true } : {}) };
          if (minMs <= SHORT_STEP_MS) return shortStepsFor(opts.modelCallTimeoutSeconds).modelStep(args);
          const long = () => longStepsFor(l.leaseTtlMs).modelStep(args);
          // A cancel interrupts a longer step instead of waiting for it to end.
          return patched(PATCH.cancelInterruptsStep.id) ? interruptible(state, long) : long();
        },
        (s) => s.usedTokens,
      );
      return r.usedTokens;
    },

    model: async (asked) => {
      if (state.cancelRequested) throw new RunCancelled();
      checkTokens(agent.name, 'ctx.model maxTokens', asked.maxTokens, 1);
      const request =
        asked.model === undefined && agent.model !== undefined ? { ...asked, model: agent.model } : asked;
      const step = ++stepNo;
      // The worst case is counted by the tokenizer outside the sandbox, in the serving model's dialect.
      const { worstCaseTokens } = await measure.measureModelCall(request);
      // Every attempt may be billed: each is reserved on its own, and a failed one counts what it
      // may be charged, so the next is reserved anew (a top-up, refused when the budget is spent).
      for (let tries = 1; ; tries++) {
        let failed = modelCallFailure(undefined, worstCaseTokens, tries);
        try {
          const r = await metered(
            worstCaseTokens,
            () => {
              const l = lease();
              return modelCallsFor(l.leaseTtlMs, opts.modelCallTimeoutSeconds).modelCall({
                ...l,
                step,
                request,
                reserved: worstCaseTokens,
              });
            },
            chargedOf,
            (err) => (failed = modelCallFailure(err, worstCaseTokens, tries)).charged,
          );
          return r.completion;
        } catch (err) {
          if (!failed.retry) throw err;
        }
        if (state.cancelRequested) throw new RunCancelled();
        await sleep(failed.delayMs);
      }
    },

    effect: async (name, args) => {
      // One keyed write: a local activity (one marker event); the store applies each key once however often it runs.
      if (name === BUILT_IN_EFFECT)
        return {
          applied: (await local.applyEffect({ key: `${spec.runId}:${name}`, runId: spec.runId })).applied,
        };
      if (!(agent.effects ?? []).includes(name))
        throw ApplicationFailure.create({
          type: 'EffectNotDeclared',
          message: `agent "${agent.name}" did not declare effect "${name}" (its effects: ${(agent.effects ?? []).join(', ') || 'none'})`,
          nonRetryable: true,
        });
      if (state.cancelRequested) throw new RunCancelled();
      const attempts = opts.effectMaxAttempts ?? DEFAULT_EFFECT_MAX_ATTEMPTS;
      return agentEffectsFor(attempts, opts.effectTimeoutSeconds ?? DEFAULT_EFFECT_TIMEOUT_SECONDS)
        .applyAgentEffect({
          key: `${spec.runId}:${name}`,
          runId: spec.runId,
          tenant: spec.tenant,
          agent: agent.name,
          name,
          args: args ?? {},
        })
        .catch((err: unknown) => {
          throw effectFailure(name, attempts, err);
        });
    },

    tool: async <T extends Record<string, unknown>>(
      name: string,
      args: Record<string, unknown>,
      toolOpts?: { key?: string },
    ): Promise<T> => {
      if (state.cancelRequested) throw new RunCancelled();
      const n = ++toolNo;
      const data = await callTool(
        {
          agent: agent.name,
          declared: agent.tools ?? [],
          runId: spec.runId,
          tool: name,
          key: `${spec.runId}:${toolOpts?.key ?? `${name}-${n}`}`,
          args,
          baseTaskQueue: baseTaskQueueOf(workflowInfo().taskQueue, agent.name),
        },
        (entry) => state.toolCalls.push(entry),
      );
      return data as T;
    },

    gate: async (g) => {
      const policy = gatePolicyOf(opts, agent, g);
      if (!isJsonData(g.proposal))
        throw ApplicationFailure.create({
          type: 'InvalidGate',
          message: `agent "${agent.name}": a gate's proposal must be JSON data (no BigInt or cycle)`,
          nonRetryable: true,
        });
      // A human may take hours: do not hold a fleet slot meanwhile. The release is the gate's own
      // outcome, not a completion: the run is not finished.
      await run.release('gated');
      const gateId = state.openGate({
        proposal: g.proposal ?? null,
        openedAt: new Date().toISOString(),
        ...policy,
      });
      state.transition('awaiting_approval', Date.now());
      // The gate's sequence where visibility shows it: the webhook scan announces each gate once.
      if (patched(PATCH.gateSeqMemo.id)) upsertMemo({ gateSeq: gateId });
      const decided = () => state.decision !== null || state.cancelRequested;
      // A gate waits at most its timeout, then takes its outcome.
      if (policy.timeoutSeconds !== null) {
        if (!(await condition(decided, policy.timeoutSeconds * 1000))) state.timeOut(Date.now());
      } else await condition(decided);
      const decision = state.decision;
      if (!decision) throw new RunCancelled();
      await run.queueAgain();
      return { ...decision };
    },
  };
}

/** An effect that failed its last attempt: `effect_failed`, naming the effect and its last error. */
function effectFailure(name: string, attempts: number, err: unknown): unknown {
  if (!(err instanceof ActivityFailure) || err.retryState !== 'MAXIMUM_ATTEMPTS_REACHED') return err;
  const last = err.cause?.message ?? err.message;
  return ApplicationFailure.create({
    type: EFFECT_FAILED,
    message: `Effect "${name}" failed all ${attempts} attempts (EFFECT_MAX_ATTEMPTS); the last: ${last}`,
    nonRetryable: true,
  });
}

import { condition } from '@temporalio/workflow';
import { stepWorstCase } from '../contract/model-call';
import type { AgentContext } from './agents';
import { local, remote, SHORT_STEP_MS, shortStep } from './run-activities';
import { failureOf, RunCancelled } from './run-failure';
import type { RunLifecycle } from './run-lifecycle';
import { Reservation } from './run-reservation';
import { callTool } from './tools';

/** What an agent's code can do inside its run: model steps under the run's lease, effects, tools, a gate. */
export function agentContext(run: RunLifecycle): AgentContext {
  const { spec, state, opts } = run;
  const reservation = new Reservation(run);
  let stepNo = 0;
  let toolNo = 0;
  return {
    step: async (tokens, stepOpts) => {
      if (state.cancelRequested) throw new RunCancelled();
      const step = ++stepNo;
      const worst = stepWorstCase(spec.runId, step, tokens);
      await reservation.reserveFor(worst);
      const a = state.admission;
      try {
        const call = (stepOpts?.minMs ?? 0) <= SHORT_STEP_MS ? shortStep.modelStep : remote.modelStep;
        const r = await call({
          runId: spec.runId,
          attempt: state.attempt,
          step,
          tokens,
          minMs: stepOpts?.minMs ?? 0,
          usedSoFar: state.attemptUsage,
          leaseTtlMs: a ? a.leaseExpiresAt - a.admittedAt : 60_000,
          tenant: spec.tenant,
          priority: spec.priority,
          cost: Math.max(1, spec.estimatedTokens),
          ...(stepOpts?.fail ? { fail: true } : {}),
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
      await run.release('gated');
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
      await run.queueAgain();
      return state.decision;
    },
  };
}

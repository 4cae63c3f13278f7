import { ApplicationFailure, patched, setHandler, upsertMemo } from '@temporalio/workflow';
import { PATCH } from './patches';
import type { RunSpec, RunView } from '../contract/fleet-port';
import type { ReleaseOutcome } from '../scheduler/types';
import { agentNamed, registeredAgents } from './agent-registry';
import { agentContext } from './run-context';
import { isJsonData } from '../contract/json-data';
import { failureOf, RunCancelled } from './run-failure';
import { untilCancelled } from './run-cancel';
import { RunLifecycle } from './run-lifecycle';
import type { RunOptions } from './run-lifecycle';
import {
  admitSignal,
  budgetRefusedSignal,
  cancelRunSignal,
  decisionSignal,
  leaseRevokedSignal,
  reofferSignal,
  runSpecQuery,
  runViewQuery,
} from '../contract/run-messages';
import type { RunStart } from '../contract/admit-notice';

export type { RunOptions } from './run-lifecycle';

/** The run's signals and queries: each only records what it says; the lifecycle acts on it. */
function setRunHandlers(run: RunLifecycle): void {
  const { state, spec } = run;
  setHandler(admitSignal, (n) => state.admit(n));
  setHandler(leaseRevokedSignal, (r) => state.revoke(r.attempt));
  setHandler(cancelRunSignal, () => void (state.cancelRequested = true));
  setHandler(reofferSignal, () => void (run.nudged = true));
  setHandler(budgetRefusedSignal, (r) => {
    if (state.admission !== null || r?.attempt !== state.attempt) return; // stale
    // A `park` run (its tenant's setting changed since it was accepted) offers itself again and waits.
    if (run.failsOnBudget) run.budgetRefusal = String(r.message);
    else run.nudged = true;
  });
  setHandler(decisionSignal, (d) => {
    // A decision meant for another gate (a late click or a retry for an earlier one) decides nothing.
    if (state.namesOtherGate(d) && patched(PATCH.decisionNamesGate.id)) return;
    state.decide(d, Date.now());
  });
  setHandler(runViewQuery, () => state.view());
  // The spec to re-drive the run with: its new execution starts past this one's attempts.
  setHandler(runSpecQuery, () => ({ ...spec, firstAttempt: state.attempt + 1 }));
}

/** The run's agent is not in this worker's workflow bundle: retrying on the same bundle cannot help. */
function unknownAgent(name: string): ApplicationFailure {
  const known = registeredAgents().map((a) => a.name);
  return ApplicationFailure.create({
    type: 'UnknownAgent',
    message:
      `This worker's workflow bundle holds no agent "${name}" (it holds ${known.join(', ') || 'none'}): ` +
      'start the worker serving its queue with the agents module that defines it.',
    nonRetryable: true,
  });
}

/**
 * One agent run: waits for the scheduler's admission, runs the agent's steps under its lease, gives
 * the slot back with the tokens it used. Queued at start by the API (attempt 0, or past a re-driven
 * run's failed execution), or started with its admission when the scheduler decided first. The agent is the bundle's registered one of that name (agent-registry.ts).
 * This function only wires: the admission protocol is run-lifecycle.ts, the per-step reservation
 * run-reservation.ts, what the agent may do run-context.ts.
 */
export async function runWorkflow(spec: RunSpec, options?: RunOptions, start?: RunStart): Promise<RunView> {
  const run = new RunLifecycle(spec, options);
  const { state } = run;
  setRunHandlers(run);
  const agent = agentNamed(spec.agent);
  // Started with its admission (decide, then start): no admit signal and no re-offer timer.
  if (start?.admission) state.admit(start.admission);

  let outcome: ReleaseOutcome = 'completed';
  try {
    await run.waitForSlot(start?.checkNow === true);
    if (!agent) throw unknownAgent(spec.agent);
    const result = await untilCancelled(state, () => agent.run(agentContext(run, agent), spec.input ?? {}));
    // A result that is not JSON could never be recorded: the run would stay open, failing its task.
    if (!isJsonData(result))
      throw ApplicationFailure.create({
        type: 'ResultUnserialisable',
        message: `agent "${spec.agent}" returned a value that is not JSON data (a BigInt or a cycle): return plain JSON data`,
        nonRetryable: true,
      });
    state.result = result;
  } catch (err) {
    if (err instanceof RunCancelled) outcome = 'cancelled';
    else {
      outcome = 'failed';
      const f = failureOf(err);
      state.error = { code: f.code, message: f.message };
    }
  }
  await run.release(outcome);
  state.transition(outcome, Date.now());
  // The run's token usage in its memo, where the Web UI and visibility listings show it.
  upsertMemo({ usageTokens: state.usage });
  if (outcome === 'failed' && state.error)
    throw ApplicationFailure.create({
      type: 'RunFailed',
      message: state.error.message,
      nonRetryable: true,
      details: [state.view()],
    });
  return state.view();
}

import { CancellationScope, condition, patched } from '@temporalio/workflow';
import { PATCH } from './patches';
import { RunCancelled } from './run-failure';
import type { RunState } from './run-state';

/** Whether the run's cancel came before `done` settled; when it did not, the watch on it is dropped. */
async function cancelledFirst(state: RunState, done: Promise<unknown>): Promise<boolean> {
  const watch = new CancellationScope();
  const cancelled = watch
    .run(() => condition(() => state.cancelRequested))
    .then(
      () => true,
      () => false,
    );
  const first = await Promise.race([
    done.then(
      () => false,
      () => false,
    ),
    cancelled,
  ]);
  if (!first) watch.cancel();
  return first;
}

/**
 * Runs one step's activity so that the run's cancel interrupts it: when the cancel comes first, the
 * activity is asked to stop (it learns so at its next heartbeat) and the run ends cancelled; when the
 * step ends first, its result stands and the watch on the cancel is dropped.
 */
export async function interruptible<R>(state: RunState, call: () => Promise<R>): Promise<R> {
  const step = new CancellationScope();
  const done = step.run(call);
  if (!(await cancelledFirst(state, done))) return done;
  step.cancel();
  await done.catch(() => undefined);
  throw new RunCancelled();
}

/**
 * Runs the agent so that the run's cancel ends it even while it awaits something no ctx call made (a
 * promise of its own, which may never settle): the agent's scope is cancelled, so its timers and
 * activities stop and its next ctx call throws, and the run ends cancelled without waiting for it.
 */
export async function untilCancelled<R>(state: RunState, agent: () => Promise<R>): Promise<R> {
  if (!patched(PATCH.cancelEndsAgent.id)) return agent();
  const scope = new CancellationScope();
  const done = scope.run(agent);
  // What the agent does after the run ended cancelled is nobody's business: never an unhandled rejection.
  done.catch(() => undefined);
  if (!(await cancelledFirst(state, done))) return done;
  scope.cancel();
  throw new RunCancelled();
}

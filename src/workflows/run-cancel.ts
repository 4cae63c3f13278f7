import { CancellationScope, condition } from '@temporalio/workflow';
import { RunCancelled } from './run-failure';
import type { RunState } from './run-state';

/**
 * Runs one step's activity so that the run's cancel interrupts it: when the cancel comes first, the
 * activity is asked to stop (it learns so at its next heartbeat) and the run ends cancelled; when the
 * step ends first, its result stands and the watch on the cancel is dropped.
 */
export async function interruptible<R>(state: RunState, call: () => Promise<R>): Promise<R> {
  const step = new CancellationScope();
  const watch = new CancellationScope();
  const done = step.run(call);
  const cancelled = watch
    .run(() => condition(() => state.cancelRequested))
    .then(
      () => true,
      () => false,
    );
  const cancelFirst = await Promise.race([
    done.then(
      () => false,
      () => false,
    ),
    cancelled,
  ]);
  if (!cancelFirst) {
    watch.cancel();
    return done;
  }
  step.cancel();
  await done.catch(() => undefined);
  throw new RunCancelled();
}

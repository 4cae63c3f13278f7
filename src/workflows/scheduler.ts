import { continueAsNew } from '@temporalio/workflow';
import { setQueryHandlers, setSignalHandlers, setUpdateHandlers } from './scheduler-handlers';
import { SchedulerManager } from './scheduler-manager';
import type { SchedulerInput } from './scheduler-manager';

export type { SchedulerInput } from './scheduler-manager';

/**
 * The fleet's one long-lived scheduler: owns admission, fairness, the governor, the ledger and the
 * drain switch (all in the pure core, `SchedulerManager.core`), and continues-as-new with its compact
 * state to run for months. This function only wires: the manager holds the state
 * (scheduler-manager.ts), the handlers change it (scheduler-handlers.ts), the loop's passes admit,
 * revoke, refuse and recover (scheduler-notices.ts, scheduler-recovery.ts).
 */
export async function schedulerWorkflow(input: SchedulerInput): Promise<void> {
  const m = new SchedulerManager(input);
  // Handlers first, before any await, so no buffered message is dropped.
  setUpdateHandlers(m);
  setSignalHandlers(m);
  setQueryHandlers(m);
  while (!m.shouldContinueAsNew()) {
    if (!m.work.dirty) await m.idle();
    m.pass();
  }
  await m.settled();
  await continueAsNew<typeof schedulerWorkflow>(m.nextInput());
}

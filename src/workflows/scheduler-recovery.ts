import { patched, sleep, workflowInfo } from '@temporalio/workflow';
import { PATCH } from './patches';
import type { FleetScheduler } from '../scheduler';
import { recoverUsage } from './scheduler-activities';
import { recoveryFigures } from '../contract/scheduler-messages';
import type { SchedulerWork } from './scheduler-work';

/**
 * After a recovery begins, the usage floor is taken again at these multiples of the lease TTL (at
 * least 10 s), on the scheduler's own timers: runs in flight when the chain was lost had part of their
 * usage in the lost ledger, and visibility shows it only once they have closed.
 */
export const RECOVERY_FOLLOW_UPS = [1, 2, 4, 8, 16] as const;

/**
 * The chain's recovery of a ledger it may have lost. A chain that may be behind (started without a
 * snapshot, i.e. after a loss or for the first time, or reset: its run id is no longer the one its
 * start event recorded) holds budgeted tenants' admissions until a usage floor it asks for itself
 * has landed, and takes the floor again on its own timers. One floor at a time: one asked for
 * meanwhile follows when it lands; a floor that found no run open past admission is taken again at
 * once while a tenant is still held.
 */
export class SchedulerRecovery {
  private requested = false;
  private floorInFlight = false;

  constructor(
    private readonly core: FleetScheduler,
    private readonly work: SchedulerWork,
  ) {}

  /** At the chain's start: a new or reset chain recovers; one continued-as-new while recovering goes on. */
  begin(fromSnapshot: boolean): void {
    const info = workflowInfo();
    const since = this.core.recoverySince();
    if (!fromSnapshot || info.runId !== info.originalExecutionRunId) this.start();
    else if (since !== null) {
      // Continued-as-new while recovering: every tenant is held again until the next floor.
      this.requested = true;
      this.armFollowUps(since);
    }
  }

  /** The watchdog's signal: a new or reset chain (hold and floor), or a follow-up (floor only). */
  onSignal(followUp: boolean): void {
    this.work.watch.assertInTask(); // start() may start timers
    if (!followUp) this.start();
    this.requested = true;
    this.work.touch();
  }

  /** A tenant that appeared while recovering is held: it needs a floor of its own. */
  onTenants(): void {
    if (this.floorDue()) this.requested = true;
  }

  /** Asks for the usage floor when one is wanted and none is in flight. */
  takeFloor(now: number): void {
    if (!this.requested || this.floorInFlight) return;
    this.requested = false;
    // A tenant without a budget period is floored at all its runs' usage.
    const windows = this.core.recoveryWindows(now);
    this.floorInFlight = true;
    let landedQuiet = false;
    this.work.track(
      recoverUsage(windows)
        .then((r) => {
          const { usage, activeRuns } = recoveryFigures(r);
          landedQuiet = activeRuns === 0;
          // Once the recovery ended the ledger is whole: a later floor (runs' usage counts a cut
          // call's worst case) would undo the refunds that settled provisional charges to the bill.
          const onlyWhileRecovering = patched(PATCH.floorOnlyWhileRecovering.id);
          this.core.floorSpent(usage, Date.now(), now, landedQuiet, onlyWhileRecovering);
        })
        .catch((err: unknown) => {
          this.requested = true; // a held tenant must not wait for the next follow-up
          throw err;
        })
        .finally(() => {
          this.floorInFlight = false;
          if (this.floorDue() || (landedQuiet && this.core.needsFloor())) this.requested = true;
        }),
    );
  }

  private start(): void {
    if (this.core.recoverySince() === null) {
      const now = Date.now();
      this.core.beginRecovery(now);
      this.armFollowUps(now);
    }
    this.requested = true;
    this.work.touch();
  }

  private armFollowUps(since: number): void {
    const step = Math.max(10, this.core.leaseTtlSeconds()) * 1000;
    // The floor that lifts the hold comes right after the hold window; the follow-ups after it.
    const ats = [since + this.core.recoveryHoldMs() + 1, ...RECOVERY_FOLLOW_UPS.map((k) => since + k * step)];
    for (const at of ats.filter((x) => x > Date.now()).sort((a, b) => a - b))
      void sleep(at - Date.now()).then(() => {
        this.requested = true;
        this.work.touch();
      });
  }

  /** A held tenant waits for a floor and the hold window is over (before it, a floor lifts no hold). */
  private floorDue(): boolean {
    const since = this.core.recoverySince();
    return since !== null && Date.now() > since + this.core.recoveryHoldMs() && this.core.needsFloor();
  }
}

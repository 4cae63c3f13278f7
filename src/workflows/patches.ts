/**
 * Every live patch id of the workflow code: what it guards and when it may go. A `patched(id)` or
 * `deprecatePatch(id)` call in src/ takes its id from here (test/unit/workflows/patches.test.ts).
 *
 * Lifecycle of a patch (CONTRIBUTING.md, "Changing a workflow"):
 * 1. `patched(PATCH.x)` guards the new code; the old branch stays while workflows begun by the old
 *    code may still be open (replay must decide as they did).
 * 2. When no open workflow ran the old code (the longest run, and the scheduler's continue-as-new,
 *    since the deploy that brought the patch), the old branch goes and the call becomes
 *    `deprecatePatch(PATCH.x)`: workflows begun with the marker still replay.
 * 3. When no open workflow began before the deprecation's deploy, the call and the entry go.
 *
 * Every patch up to 0.1.0 was retired at once (no old code runs in production).
 */
export const PATCH = {
  wakeTimerByTime: {
    id: 'scheduler-wake-timer-by-time',
    guards:
      "The scheduler's wake-up timer counts as pending only until its time (workflow time), not until its fire callback has run.",
    until: 'deprecate once every scheduler chain has continued-as-new since the deploy that brought it',
  },
  floorOnlyWhileRecovering: {
    id: 'scheduler-floor-only-while-recovering',
    guards:
      "A usage floor (the watchdog's follow-ups, the chain's own timers) that lands after the chain's recovery ended leaves `spent` alone: it would undo refunds of provisional charges.",
    until: 'deprecate once every scheduler chain has continued-as-new since the deploy that brought it',
  },
  reportsByPull: {
    id: 'scheduler-reports-by-pull',
    guards:
      'The scheduler pulls worker reports from the report log (`pullReports`, one activity at a time) besides taking them as updates and signals.',
    until: 'deprecate once every scheduler chain has continued-as-new since the deploy that brought it',
  },
  admitNowKeepsQueued: {
    id: 'scheduler-admit-now-keeps-queued',
    guards:
      'A fresh `admitNow` unit the round does not admit stays queued in its place (its run is started next) instead of being withdrawn and submitted again after its start.',
    until: 'deprecate once every scheduler chain has continued-as-new since the deploy that brought it',
  },
  cancelInterruptsStep: {
    id: 'run-cancel-interrupts-step',
    guards:
      "A run's cancel interrupts its longer step (a regular activity) in flight instead of waiting for the step to end.",
    until: 'deprecate once no run begun before the deploy that brought it is still open',
  },
  decisionNamesGate: {
    id: 'run-decision-names-gate',
    guards:
      "A decision signal that names a gate (`gateId`) other than the run's open one is ignored; before, every decision decided the open gate.",
    until: 'deprecate once no run begun before the deploy that brought it is still open',
  },
  gateSeqMemo: {
    id: 'run-gate-seq-memo',
    guards:
      "Opening a gate writes its sequence to the run's memo (`gateSeq`), so the webhook scan announces each gate of a run once.",
    until: 'deprecate once no run begun before the deploy that brought it is still open',
  },
  cancelEndsAgent: {
    id: 'run-cancel-ends-agent',
    guards:
      "A run's cancel ends its agent even while the agent awaits something no ctx call made (its own promise), instead of waiting for its next ctx call.",
    until: 'deprecate once no run begun before the deploy that brought it is still open',
  },
  batchItemKeys: {
    id: 'batch-item-fairness-keys',
    guards:
      "A batch's chunks carry its items' fairness keys (`fairnessKey`, `fairnessKeys`) to the activity that starts their runs.",
    until: 'deprecate once no batch begun before the deploy that brought it is still open',
  },
} as const satisfies Record<string, PatchEntry>;

export interface PatchEntry {
  /** The id given to `patched` / `deprecatePatch`; never reused. */
  id: string;
  /** What the new branch does that the old one did not. */
  guards: string;
  /** When the entry may move to its next step (a date or a release, and the condition). */
  until: string;
}

/** The ids in use, for the check that every call names one. */
export const PATCH_IDS: readonly string[] = Object.values(PATCH as Record<string, PatchEntry>).map(
  (p) => p.id,
);

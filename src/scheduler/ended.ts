/**
 * The core's bounded memory of runs whose lease ended: finished runs (released with a final outcome,
 * or cancelled while queued) and expired attempts. With it a repeated message cannot bring a run back:
 * a retried batch chunk, an API retry around an update that did apply, or a renewal that arrives after
 * the lease expired. Run workflows are the second guard: a closed workflow refuses every admission.
 *
 * Bounded by count, oldest forgotten first: `MAX_ENDED_RUNS` ids, so at most ~100 KiB of the
 * continue-as-new snapshot with the longest legal run ids.
 */
export const MAX_ENDED_RUNS = 1024;

export interface Ended {
  /** Highest attempt that ended. */
  attempt: number;
  /** True: the run is done for good (completed, failed, cancelled). False: that attempt expired. */
  final: boolean;
  /** Tokens already charged for `attempt` (a late release charges only what exceeds it). */
  charged: number;
}

/** [runId, attempt, final 1/0, charged] */
export type EndedTuple = [string, number, 0 | 1, number];

export class EndedRuns {
  private readonly byRun = new Map<string, Ended>();
  constructor(private readonly max = MAX_ENDED_RUNS) {}

  get size(): number {
    return this.byRun.size;
  }

  get(runId: string): Ended | undefined {
    return this.byRun.get(runId);
  }

  /** Records an ended attempt (re-inserted as the newest). */
  record(runId: string, e: Ended): void {
    this.byRun.delete(runId);
    this.byRun.set(runId, e);
    while (this.byRun.size > this.max) this.byRun.delete(this.evictable());
  }

  /**
   * The entry to forget: the oldest finished run if any, else the oldest. Finished runs go first,
   * expired attempts only when nothing else is left: an expired attempt is rare (one per revoke) and
   * its run is still going, so a late message about it is likelier; a finished run forgotten is
   * refused by its closed workflow.
   */
  private evictable(): string {
    const oldest = this.byRun.keys().next().value as string;
    for (const [id, e] of this.byRun) if (e.final) return id;
    return oldest;
  }

  forget(runId: string): void {
    this.byRun.delete(runId);
  }

  /** True when a message about (runId, attempt) comes after that attempt ended or the run finished. */
  isPast(runId: string, attempt: number): boolean {
    const e = this.byRun.get(runId);
    return e !== undefined && (e.final || attempt <= e.attempt);
  }

  snapshot(): EndedTuple[] {
    return [...this.byRun].map(([id, e]) => [id, e.attempt, e.final ? 1 : 0, e.charged]);
  }

  static restore(tuples: readonly EndedTuple[] | undefined, max = MAX_ENDED_RUNS): EndedRuns {
    const r = new EndedRuns(max);
    for (const [id, attempt, final, charged] of tuples ?? [])
      r.record(id, { attempt, final: final === 1, charged });
    return r;
  }
}

/** The body of `GET /admin/calls`: how the runs' served calls overlapped, counted at the provider. */
export interface CallLogSummary {
  /** Calls served (200) that named a call key. */
  served: number;
  /** Distinct runs among them. */
  runs: number;
  /** Step keys (`<runId>:<step>`) served more than once: a step that ran twice. */
  stepsServedTwice: number;
  /** Runs that had two calls in flight at the same moment: two executions of one run at once. */
  runsOverlapping: number;
  /** Up to 20 run ids of each kind, for a first look. */
  sample: { stepsServedTwice: string[]; runsOverlapping: string[] };
  /** The most calls in flight at once, all runs together. */
  maxInFlight: number;
}

const runOf = (callKey: string) => {
  const cut = callKey.lastIndexOf(':');
  return cut > 0 ? callKey.slice(0, cut) : callKey;
};

/**
 * Every served call's window (from its arrival to its answer), by call key `<runId>:<step>`: the
 * place where two leases of one run would show, as two of its calls in flight at once or one step
 * served twice, whatever the scheduler believes. Bounded: past `max` step keys it stops recording
 * new ones (the summary says how many it saw).
 */
export class CallLog {
  private readonly servedPerKey = new Map<string, number>();
  private readonly inFlightPerRun = new Map<string, number>();
  private readonly runs = new Set<string>();
  private readonly twice = new Set<string>();
  private readonly overlapping = new Set<string>();
  private served = 0;
  private inFlight = 0;
  private maxInFlight = 0;

  constructor(private readonly max = 200_000) {}

  /** How often the step `callKey` has been served so far (0 past `max` keys, or without a key). */
  timesServed(callKey: string | undefined): number {
    return callKey === undefined ? 0 : (this.servedPerKey.get(callKey) ?? 0);
  }

  /** A call is being served (decided ok); `done` when its answer has left. */
  begin(callKey: string | undefined): () => void {
    if (callKey === undefined) return () => undefined;
    const run = runOf(callKey);
    const seen = this.servedPerKey.get(callKey);
    if (seen === undefined && this.servedPerKey.size >= this.max) return () => undefined;
    this.served += 1;
    this.servedPerKey.set(callKey, (seen ?? 0) + 1);
    if (seen !== undefined) this.twice.add(callKey);
    this.runs.add(run);
    const now = (this.inFlightPerRun.get(run) ?? 0) + 1;
    this.inFlightPerRun.set(run, now);
    if (now > 1) this.overlapping.add(run);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.inFlight -= 1;
      const left = (this.inFlightPerRun.get(run) ?? 1) - 1;
      if (left > 0) this.inFlightPerRun.set(run, left);
      else this.inFlightPerRun.delete(run);
    };
  }

  summary(): CallLogSummary {
    return {
      served: this.served,
      runs: this.runs.size,
      stepsServedTwice: this.twice.size,
      runsOverlapping: this.overlapping.size,
      sample: {
        stepsServedTwice: [...this.twice].slice(0, 20),
        runsOverlapping: [...this.overlapping].slice(0, 20),
      },
      maxInFlight: this.maxInFlight,
    };
  }
}

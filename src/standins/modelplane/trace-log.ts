/**
 * The W3C `traceparent` each call arrived with, by call key (`<runId>:<step>`), every attempt's in
 * order: proof, taken where the work happens, that a run's trace reached the provider. Bounded: the
 * oldest keys go first past `max`.
 */
export class TraceLog {
  private readonly seen = new Map<string, string[]>();

  constructor(private readonly max = 10_000) {}

  arrived(callKey: string | undefined, traceparent: string | undefined): void {
    if (callKey === undefined || traceparent === undefined) return;
    const list = this.seen.get(callKey);
    if (list) {
      if (list.length < 20) list.push(traceparent);
      return;
    }
    this.seen.set(callKey, [traceparent]);
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
  }

  /** The traceparents the calls of `callKey` carried, in arrival order ([] when none did). */
  of(callKey: string): readonly string[] {
    return this.seen.get(callKey) ?? [];
  }

  /** Every recorded call key of run `runId` with its traceparents. */
  ofRun(runId: string): Record<string, readonly string[]> {
    const out: Record<string, readonly string[]> = {};
    for (const [key, list] of this.seen) if (key.startsWith(`${runId}:`)) out[key] = list;
    return out;
  }
}

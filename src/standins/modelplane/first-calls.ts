/**
 * When each run's first model call reached the provider (ms since epoch), by run id: the measure of
 * "priority reaches execution" taken where the work happens. Call keys are `<runId>:<step>`.
 * Bounded: the oldest entries go first past `max`.
 */
export class FirstCallLog {
  private readonly at = new Map<string, number>();

  constructor(private readonly max = 100_000) {}

  arrived(callKey: string | undefined, now: number): void {
    if (callKey === undefined) return;
    const cut = callKey.lastIndexOf(':');
    const runId = cut > 0 ? callKey.slice(0, cut) : callKey;
    if (this.at.has(runId)) return;
    this.at.set(runId, now);
    if (this.at.size > this.max) this.at.delete(this.at.keys().next().value as string);
  }

  get(runId: string): number | undefined {
    return this.at.get(runId);
  }

  /**
   * The runs in the order their first calls arrived (as recorded: the oldest are gone past `max`):
   * the order in which work reached the provider, ties in the millisecond clock broken by arrival.
   */
  arrivals(): string[] {
    return [...this.at.keys()];
  }

  /** The recorded first-call times of `runIds` (absent ones omitted). */
  pick(runIds: readonly string[]): Record<string, number> {
    const out: Record<string, number> = {};
    for (const id of runIds) {
      const t = this.at.get(id);
      if (t !== undefined) out[id] = t;
    }
    return out;
  }
}

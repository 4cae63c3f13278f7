import type { Renewal } from '../scheduler/types';

/** A lease not renewed from this worker for this long is forgotten here (its next renewal goes at once). */
const FORGET_AFTER_MS = 10 * 60_000;

/**
 * Spaces a worker's renewals: at most one per lease (run and attempt) per its gap, the newest of
 * what came meanwhile. The scheduler extends a lease by its TTL from when it books a renewal, so a
 * gap of a third of the TTL leaves two thirds for the renewal to be booked. A lease's first renewal
 * from this worker goes at once (a scheduler that lost it learns who it is); a release supersedes
 * the renewals waiting behind it.
 */
export class RenewalSpacing {
  /** The newest renewal per run not sent yet, with its lease's gap. */
  private waiting = new Map<string, { r: Renewal; gapMs: number }>();
  /** When a renewal of each lease (`runId\u0000attempt`) last went. */
  private sentAt = new Map<string, number>();
  private prunedAt = 0;

  add(r: Renewal, gapMs: number): void {
    this.waiting.set(r.runId, { r, gapMs });
  }

  /** The run released: nothing waiting for it goes, and its next lease starts afresh. */
  drop(runId: string): void {
    this.waiting.delete(runId);
    for (const key of this.sentAt.keys()) if (key.startsWith(`${runId}\u0000`)) this.sentAt.delete(key);
  }

  /** Renewals waiting. */
  get size(): number {
    return this.waiting.size;
  }

  /** Takes the renewals whose lease's gap has passed since its last one went; the rest keep waiting. */
  due(now: number): Renewal[] {
    this.prune(now);
    const out: Renewal[] = [];
    for (const [runId, { r, gapMs }] of this.waiting) {
      const key = `${r.runId}\u0000${r.attempt}`;
      const last = this.sentAt.get(key);
      if (last !== undefined && now - last < gapMs) continue;
      this.sentAt.set(key, now);
      this.waiting.delete(runId);
      out.push(r);
    }
    return out;
  }

  private prune(now: number): void {
    if (now - this.prunedAt < FORGET_AFTER_MS) return;
    this.prunedAt = now;
    for (const [key, at] of this.sentAt) if (now - at > FORGET_AFTER_MS) this.sentAt.delete(key);
  }
}

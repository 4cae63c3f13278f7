import { IndexedHeap } from './heap';
import type { Lease } from './queue-state';
import { PRIORITIES } from './types';
import type { Admission } from './types';

/** In-flight units by run id, with their lease expiries in a heap (earliest first, then by admission seq). */
export class LeaseTable {
  private readonly byRun = new Map<string, Lease>();
  /** Leases by model pool (`pools.ts`). */
  private readonly perPool = new Map<string, number>();
  private readonly expiries = new IndexedHeap<Lease>(
    (x, y) => x.expiresAt < y.expiresAt || (x.expiresAt === y.expiresAt && x.seq < y.seq),
  );

  get size(): number {
    return this.byRun.size;
  }

  get(runId: string): Lease | undefined {
    return this.byRun.get(runId);
  }

  add(l: Lease): void {
    this.byRun.set(l.runId, l);
    this.expiries.push(l);
    this.perPool.set(l.pool, (this.perPool.get(l.pool) ?? 0) + 1);
  }

  remove(l: Lease): void {
    if (this.byRun.get(l.runId) !== l) return;
    this.byRun.delete(l.runId);
    this.expiries.remove(l);
    const left = (this.perPool.get(l.pool) ?? 1) - 1;
    if (left > 0) this.perPool.set(l.pool, left);
    else this.perPool.delete(l.pool);
  }

  /** Leases of model pool `pool`. */
  inPool(pool: string): number {
    return this.perPool.get(pool) ?? 0;
  }

  /** All leases, in no particular order. */
  values(): IterableIterator<Lease> {
    return this.byRun.values();
  }

  /** Moves the expiry of `l` (never backwards). */
  extend(l: Lease, expiresAt: number): void {
    if (expiresAt <= l.expiresAt) return;
    l.expiresAt = expiresAt;
    this.expiries.update(l);
  }

  /** The lease that expires first. */
  earliest(): Lease | undefined {
    return this.expiries.peek();
  }

  /** All leases in admission order (for snapshots and scans). */
  all(): Lease[] {
    return [...this.byRun.values()].sort((x, y) => x.seq - y.seq);
  }

  /** Latest expiry among all leases, or null (O(n); for the draining Retry-After). */
  latestExpiry(): number | null {
    let max: number | null = null;
    for (const l of this.byRun.values()) if (max === null || l.expiresAt > max) max = l.expiresAt;
    return max;
  }
}

export function toAdmission(l: Lease): Admission {
  return {
    runId: l.runId,
    tenant: l.tenant.id,
    priority: PRIORITIES[l.lane],
    attempt: l.attempt,
    seq: l.seq,
    admittedAt: l.admittedAt,
    leaseExpiresAt: l.expiresAt,
    reserved: l.reserved,
  };
}

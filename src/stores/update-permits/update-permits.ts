/**
 * Leases on the scheduler updates that workers may have in flight at once, fleet-wide. Temporal
 * takes at most 10 updates in flight per workflow (`history.maxInFlightUpdates`); each worker bounds
 * its own, but only a count shared by every worker bounds their sum. A permit is one of `slots`
 * rows per scheduler with a holder and an expiry: a worker killed while it held one frees it when
 * the lease runs out, without anyone's help.
 */
export interface UpdatePermits {
  /**
   * Takes a free permit of scheduler `schedulerId`'s `slots` for `holder` (unique per acquisition)
   * until `now + ttlMs`: its slot, or undefined when every slot is held by a live lease.
   */
  acquire(
    schedulerId: string,
    slots: number,
    holder: string,
    now: number,
    ttlMs: number,
  ): Promise<number | undefined>;
  /** Extends `holder`'s lease on `slot` to `until`; false when it no longer holds it (expired, taken). */
  renew(schedulerId: string, slot: number, holder: string, until: number): Promise<boolean>;
  /** Frees `slot` if `holder` still holds it; releasing twice, or after a reclaim, changes nothing. */
  release(schedulerId: string, slot: number, holder: string): Promise<void>;
  close(): Promise<void>;
}

/** The schema, the same for both engines. */
export const UPDATE_PERMITS_DDL = `
  CREATE TABLE IF NOT EXISTS scheduler_update_permits (
    scheduler_id TEXT NOT NULL,
    slot         INTEGER NOT NULL,
    holder       TEXT NOT NULL,
    expires_at   BIGINT NOT NULL,
    PRIMARY KEY (scheduler_id, slot)
  );
`;

/**
 * The statements both engines share, with `?` placeholders. A slot is taken by one statement that
 * inserts it or takes it over only when its lease has run out (0 rows changed: someone holds it), so
 * two acquirers of one slot never both win.
 */
export const PERMIT_SQL = {
  take: `INSERT INTO scheduler_update_permits (scheduler_id, slot, holder, expires_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (scheduler_id, slot) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE scheduler_update_permits.expires_at <= ?`,
  renew:
    'UPDATE scheduler_update_permits SET expires_at = ? WHERE scheduler_id = ? AND slot = ? AND holder = ?',
  release: 'DELETE FROM scheduler_update_permits WHERE scheduler_id = ? AND slot = ? AND holder = ?',
} as const;

/** The order in which an acquirer tries the slots: from a random one, so acquirers spread out. */
export function slotOrder(slots: number, start = Math.floor(Math.random() * slots)): number[] {
  return Array.from({ length: slots }, (_, i) => (start + i) % slots);
}

/** `acquire` over one engine's `take` (true: the row changed, the slot is the holder's). */
export async function acquireWith(
  take: (slot: number, until: number, now: number) => Promise<boolean>,
  slots: number,
  now: number,
  ttlMs: number,
): Promise<number | undefined> {
  for (const slot of slotOrder(slots)) if (await take(slot, now + ttlMs, now)) return slot;
  return undefined;
}

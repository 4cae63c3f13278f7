/** Keys are kept at least this long (spec: at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A claim not completed within this time belongs to a request that died; a retry may take it over.
 * The default of IDEMPOTENCY_PENDING_TTL_SECONDS.
 */
export const PENDING_CLAIM_TTL_MS = 2 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 1000;

export interface IdempotencyRecord {
  tenant: string;
  key: string;
  bodyHash: string;
  runId: string;
  state: 'pending' | 'done';
  createdAt: number;
}

export interface IdempotencyRow {
  tenant: string;
  key: string;
  body_hash: string;
  run_id: string;
  state: 'pending' | 'done';
  created_at: number | string;
}

export const IDEMPOTENCY_DDL = `
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant     TEXT NOT NULL,
    key        TEXT NOT NULL,
    body_hash  TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('pending', 'done')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
  );
  CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);`;

export const toIdempotencyRecord = (r: IdempotencyRow): IdempotencyRecord => ({
  tenant: r.tenant,
  key: r.key,
  bodyHash: r.body_hash,
  runId: r.run_id,
  state: r.state,
  createdAt: Number(r.created_at),
});

/**
 * `claimed`: the caller owns the key and starts `runId` — its own new id, or, when it takes over the
 * stale claim of a request that died with the same body, that request's id (so the run cannot start twice).
 */
export type ClaimResult = { claimed: true; runId: string } | { claimed: false; existing: IdempotencyRecord };

/**
 * What a claim does with the row already under (tenant, key), if any (both engines decide alike):
 * refuse with the live record, or write a pending claim under the returned run id.
 */
export function decideClaim(
  row: IdempotencyRecord | undefined,
  rec: Omit<IdempotencyRecord, 'state'>,
  pendingTtlMs: number = PENDING_CLAIM_TTL_MS,
): ClaimResult {
  const live =
    row &&
    row.createdAt >= rec.createdAt - IDEMPOTENCY_RETENTION_MS &&
    (row.state === 'done' || row.createdAt >= rec.createdAt - pendingTtlMs);
  if (live) return { claimed: false, existing: row };
  // Past its retention a key is new again: a new run id, never the old run's (Temporal would refuse
  // the start as a duplicate). A stale pending claim with the same body keeps its id.
  const takeover =
    row &&
    row.state === 'pending' &&
    row.bodyHash === rec.bodyHash &&
    row.createdAt >= rec.createdAt - IDEMPOTENCY_RETENTION_MS;
  return { claimed: true, runId: takeover ? row.runId : rec.runId };
}

/**
 * (tenant, key) → the run a request created. A request first claims its key (pending), then completes
 * the claim once the run is accepted, or releases it when refused, so a refused request leaves no row.
 */
export interface IdempotencyStore {
  find(tenant: string, key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Claims (tenant, key) for a request, or returns the live record that already holds it; a pending
   * claim older than `pendingTtlMs` (default PENDING_CLAIM_TTL_MS) is stale and taken over.
   */
  claim(rec: Omit<IdempotencyRecord, 'state'>, pendingTtlMs?: number): Promise<ClaimResult>;
  complete(tenant: string, key: string): Promise<void>;
  /** Deletes a pending claim (a done record is never released). */
  release(tenant: string, key: string): Promise<void>;
  /** Deletes records older than the retention; returns how many. */
  prune(now: number): Promise<number>;
  count(): Promise<number>;
}

/** Prunes at most once a minute, from the claim path; a failed prune goes to `onError` (else is dropped). */
export class LazyPrune {
  private lastPruneAt = 0;
  constructor(
    private readonly prune: (now: number) => unknown,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}
  maybe(now: number): void {
    if (now - this.lastPruneAt < PRUNE_EVERY_MS) return;
    this.lastPruneAt = now;
    try {
      void Promise.resolve(this.prune(now)).catch((err: unknown) => this.onError(err));
    } catch (err) {
      this.onError(err);
    }
  }
}

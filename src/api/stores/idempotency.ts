import type Database from 'better-sqlite3';

/** Keys are kept at least this long (spec: at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A claim not completed within this time belongs to a request that died; a retry may take it over. */
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

interface Row {
  tenant: string;
  key: string;
  body_hash: string;
  run_id: string;
  state: 'pending' | 'done';
  created_at: number;
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

const toRecord = (r: Row): IdempotencyRecord => ({
  tenant: r.tenant,
  key: r.key,
  bodyHash: r.body_hash,
  runId: r.run_id,
  state: r.state,
  createdAt: r.created_at,
});

/**
 * `claimed`: the caller owns the key and starts `runId` — its own new id, or, when it takes over the
 * stale claim of a request that died with the same body, that request's id (so the run cannot start twice).
 */
export type ClaimResult = { claimed: true; runId: string } | { claimed: false; existing: IdempotencyRecord };

/**
 * (tenant, key) → the run a request created. A request first claims its key (pending), then completes
 * the claim once the run is accepted, or releases it when refused, so a refused request leaves no row.
 */
export class IdempotencyStore {
  private readonly stmts;
  private readonly claimTx: (rec: Omit<IdempotencyRecord, 'state'>) => ClaimResult;
  private lastPruneAt = 0;

  constructor(db: Database.Database) {
    this.stmts = {
      get: db.prepare<[string, string], Row>('SELECT * FROM idempotency_keys WHERE tenant = ? AND key = ?'),
      upsert: db.prepare(
        `INSERT OR REPLACE INTO idempotency_keys (tenant, key, body_hash, run_id, state, created_at)
         VALUES (@tenant, @key, @bodyHash, @runId, 'pending', @createdAt)`,
      ),
      complete: db.prepare(
        `UPDATE idempotency_keys SET state = 'done' WHERE tenant = ? AND key = ? AND state = 'pending'`,
      ),
      release: db.prepare(`DELETE FROM idempotency_keys WHERE tenant = ? AND key = ? AND state = 'pending'`),
      prune: db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?'),
      count: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM idempotency_keys'),
    };
    const tx = db.transaction((rec: Omit<IdempotencyRecord, 'state'>): ClaimResult => {
      const row = this.stmts.get.get(rec.tenant, rec.key);
      const live =
        row &&
        row.created_at >= rec.createdAt - IDEMPOTENCY_RETENTION_MS &&
        (row.state === 'done' || row.created_at >= rec.createdAt - PENDING_CLAIM_TTL_MS);
      if (live) return { claimed: false, existing: toRecord(row) };
      // Past its retention a key is new again: a new run id, never the old run's (Temporal would refuse
      // the start as a duplicate). A stale pending claim with the same body keeps its id.
      const takeover =
        row &&
        row.state === 'pending' &&
        row.body_hash === rec.bodyHash &&
        row.created_at >= rec.createdAt - IDEMPOTENCY_RETENTION_MS;
      const runId = takeover ? row.run_id : rec.runId;
      this.stmts.upsert.run({ ...rec, runId });
      return { claimed: true, runId };
    });
    // IMMEDIATE: two API processes sharing the file cannot both claim the same key.
    this.claimTx = (rec) => tx.immediate(rec);
  }

  find(tenant: string, key: string): IdempotencyRecord | undefined {
    const row = this.stmts.get.get(tenant, key);
    return row && toRecord(row);
  }

  /** Claims (tenant, key) for a request, or returns the live record that already holds it. */
  claim(rec: Omit<IdempotencyRecord, 'state'>): ClaimResult {
    this.pruneLazily(rec.createdAt);
    return this.claimTx(rec);
  }

  complete(tenant: string, key: string): void {
    this.stmts.complete.run(tenant, key);
  }

  release(tenant: string, key: string): void {
    this.stmts.release.run(tenant, key);
  }

  /** Deletes records older than the retention; returns how many. */
  prune(now: number): number {
    this.lastPruneAt = now;
    return this.stmts.prune.run(now - IDEMPOTENCY_RETENTION_MS).changes;
  }

  count(): number {
    return this.stmts.count.get()?.n ?? 0;
  }

  private pruneLazily(now: number): void {
    if (now - this.lastPruneAt >= PRUNE_EVERY_MS) this.prune(now);
  }
}

import type Database from 'better-sqlite3';
import { IDEMPOTENCY_RETENTION_MS, LazyPrune, decideClaim, toIdempotencyRecord } from './idempotency';
import type { ClaimResult, IdempotencyRecord, IdempotencyRow, IdempotencyStore } from './idempotency';

/** The idempotency store in SQLite. */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly stmts;
  private readonly claimTx: (rec: Omit<IdempotencyRecord, 'state'>, pendingTtlMs?: number) => ClaimResult;
  private readonly pruner = new LazyPrune((now) => this.pruneNow(now));

  constructor(db: Database.Database) {
    this.stmts = {
      get: db.prepare<[string, string], IdempotencyRow>(
        'SELECT * FROM idempotency_keys WHERE tenant = ? AND key = ?',
      ),
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
    const tx = db.transaction((rec: Omit<IdempotencyRecord, 'state'>, pendingTtlMs?: number): ClaimResult => {
      const row = this.stmts.get.get(rec.tenant, rec.key);
      const decision = decideClaim(row && toIdempotencyRecord(row), rec, pendingTtlMs);
      if (decision.claimed) this.stmts.upsert.run({ ...rec, runId: decision.runId });
      return decision;
    });
    // IMMEDIATE: two API processes sharing the file cannot both claim the same key.
    this.claimTx = (rec, pendingTtlMs) => tx.immediate(rec, pendingTtlMs);
  }

  async find(tenant: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = this.stmts.get.get(tenant, key);
    return row && toIdempotencyRecord(row);
  }

  async claim(rec: Omit<IdempotencyRecord, 'state'>, pendingTtlMs?: number): Promise<ClaimResult> {
    this.pruner.maybe(rec.createdAt);
    return this.claimTx(rec, pendingTtlMs);
  }

  async complete(tenant: string, key: string): Promise<void> {
    this.stmts.complete.run(tenant, key);
  }

  async release(tenant: string, key: string): Promise<void> {
    this.stmts.release.run(tenant, key);
  }

  async prune(now: number): Promise<number> {
    return this.pruneNow(now);
  }

  async count(): Promise<number> {
    return this.stmts.count.get()?.n ?? 0;
  }

  private pruneNow(now: number): number {
    return this.stmts.prune.run(now - IDEMPOTENCY_RETENTION_MS).changes;
  }
}

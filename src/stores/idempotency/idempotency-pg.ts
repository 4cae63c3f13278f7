import type { Pool } from 'pg';
import { inTransaction } from '../engine/pg';
import { decideClaim, IDEMPOTENCY_RETENTION_MS, LazyPrune, toIdempotencyRecord } from './idempotency';
import type { ClaimResult, IdempotencyRecord, IdempotencyRow, IdempotencyStore } from './idempotency';

/** The idempotency store in PostgreSQL: API processes on any hosts claim each key once between them. */
export class PgIdempotencyStore implements IdempotencyStore {
  private readonly pruner = new LazyPrune((now) => this.prune(now));

  constructor(private readonly pool: Pool) {}

  async find(tenant: string, key: string): Promise<IdempotencyRecord | undefined> {
    const r = await this.pool.query<IdempotencyRow>(
      'SELECT * FROM idempotency_keys WHERE tenant = $1 AND key = $2',
      [tenant, key],
    );
    const row = r.rows[0];
    return row && toIdempotencyRecord(row);
  }

  claim(rec: Omit<IdempotencyRecord, 'state'>, pendingTtlMs?: number): Promise<ClaimResult> {
    this.pruner.maybe(rec.createdAt);
    return inTransaction(this.pool, async (c) => {
      // A new key: the insert wins it outright (a concurrent insert of the same key waits for this one).
      const ins = await c.query(
        `INSERT INTO idempotency_keys (tenant, key, body_hash, run_id, state, created_at)
         VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT (tenant, key) DO NOTHING`,
        [rec.tenant, rec.key, rec.bodyHash, rec.runId, rec.createdAt],
      );
      if (ins.rowCount === 1) return { claimed: true, runId: rec.runId };
      // A known key: decide under the row's lock, as the SQLite store does under its write lock.
      const r = await c.query<IdempotencyRow>(
        'SELECT * FROM idempotency_keys WHERE tenant = $1 AND key = $2 FOR UPDATE',
        [rec.tenant, rec.key],
      );
      const row = r.rows[0];
      const decision = decideClaim(row && toIdempotencyRecord(row), rec, pendingTtlMs);
      if (decision.claimed) {
        await c.query(
          `INSERT INTO idempotency_keys (tenant, key, body_hash, run_id, state, created_at)
           VALUES ($1, $2, $3, $4, 'pending', $5)
           ON CONFLICT (tenant, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, run_id = EXCLUDED.run_id,
             state = 'pending', created_at = EXCLUDED.created_at`,
          [rec.tenant, rec.key, rec.bodyHash, decision.runId, rec.createdAt],
        );
      }
      return decision;
    });
  }

  async complete(tenant: string, key: string): Promise<void> {
    await this.pool.query(
      `UPDATE idempotency_keys SET state = 'done' WHERE tenant = $1 AND key = $2 AND state = 'pending'`,
      [tenant, key],
    );
  }

  async release(tenant: string, key: string): Promise<void> {
    await this.pool.query(
      `DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND state = 'pending'`,
      [tenant, key],
    );
  }

  async prune(now: number): Promise<number> {
    const r = await this.pool.query('DELETE FROM idempotency_keys WHERE created_at < $1', [
      now - IDEMPOTENCY_RETENTION_MS,
    ]);
    return r.rowCount ?? 0;
  }

  async count(): Promise<number> {
    const r = await this.pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM idempotency_keys');
    return Number(r.rows[0]?.n ?? 0);
  }
}

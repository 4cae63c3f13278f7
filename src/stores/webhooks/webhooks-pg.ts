import type { Pool } from 'pg';
import { inTransaction, numberedPlaceholders } from '../engine/pg';
import {
  DUE_SQL,
  endpointTakes,
  inBatches,
  PRUNE_BATCH,
  PRUNE_EVENTS_SQL,
  pruneCutoffs,
  toDeliveries,
  toEndpoint,
  type AttemptRecord,
  type AttemptRow,
  type DeliveryJob,
  type DeliveryKey,
  type DeliveryRow,
  type DeliveryState,
  type DeliveryView,
  type EndpointRow,
  type OutboxEvent,
  type WebhookEndpoint,
  type WebhookStore,
} from './webhooks';

/** The tables of WEBHOOKS_DDL in PostgreSQL (times as BIGINT ms). */
export const WEBHOOKS_PG_DDL = `
  CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '', secret TEXT NOT NULL, created_at BIGINT NOT NULL
  );
  CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant);
  CREATE TABLE webhook_events (
    event_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,
    occurred_at BIGINT NOT NULL, created_at BIGINT NOT NULL
  );
  CREATE TABLE webhook_deliveries (
    endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, tenant TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at BIGINT NOT NULL,
    claimed_until BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL,
    PRIMARY KEY (endpoint_id, event_id)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
  CREATE TABLE webhook_attempts (
    endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, n INTEGER NOT NULL, at BIGINT NOT NULL,
    status INTEGER, answer TEXT NOT NULL DEFAULT '', error TEXT, duration_ms BIGINT NOT NULL,
    PRIMARY KEY (endpoint_id, event_id, n)
  );
  CREATE TABLE webhook_scan (
    name TEXT PRIMARY KEY, cursor_at BIGINT NOT NULL, claimed_until BIGINT NOT NULL DEFAULT 0
  );`;

/** The indexes pruning needs (migration 6): deliveries by event, events by age. */
export const WEBHOOKS_PG_PRUNE_INDEXES_DDL = `
  CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
  CREATE INDEX IF NOT EXISTS webhook_events_created ON webhook_events (created_at);`;

/** A batch of finished deliveries past the cutoff ($1), at most $2, deleted with their attempts. */
const PRUNE_DELIVERIES_PG = `
  WITH batch AS (
    SELECT endpoint_id, event_id FROM webhook_deliveries
    WHERE state <> 'pending' AND created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED),
  attempts AS (
    DELETE FROM webhook_attempts a USING batch b
    WHERE a.endpoint_id = b.endpoint_id AND a.event_id = b.event_id)
  DELETE FROM webhook_deliveries d USING batch b
  WHERE d.endpoint_id = b.endpoint_id AND d.event_id = b.event_id`;

/** Webhooks out in PostgreSQL: every API process on every host claims from the same rows. */
export class PgWebhookStore implements WebhookStore {
  constructor(private readonly pool: Pool) {}

  async createEndpoint(ep: WebhookEndpoint, secret: string, maxPerTenant: number): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      // Two creations of one tenant's at once must not both pass the cap.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`fairway-webhooks:${ep.tenant}`]);
      const n = await c.query<{ n: string }>(
        'SELECT COUNT(*) AS n FROM webhook_endpoints WHERE tenant = $1',
        [ep.tenant],
      );
      if (Number(n.rows[0]?.n ?? 0) >= maxPerTenant) return false;
      await c.query(
        `INSERT INTO webhook_endpoints (id, tenant, url, events, description, secret, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [ep.id, ep.tenant, ep.url, JSON.stringify(ep.events), ep.description, secret, ep.createdAt],
      );
      return true;
    });
  }

  async getEndpoint(tenant: string, id: string): Promise<WebhookEndpoint | undefined> {
    const r = await this.pool.query<EndpointRow>(
      'SELECT * FROM webhook_endpoints WHERE tenant = $1 AND id = $2',
      [tenant, id],
    );
    return r.rows[0] && toEndpoint(r.rows[0]);
  }

  async listEndpoints(tenant: string): Promise<WebhookEndpoint[]> {
    const r = await this.pool.query<EndpointRow>(
      'SELECT * FROM webhook_endpoints WHERE tenant = $1 ORDER BY created_at, id',
      [tenant],
    );
    return r.rows.map(toEndpoint);
  }

  async deleteEndpoint(tenant: string, id: string): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      const r = await c.query('DELETE FROM webhook_endpoints WHERE tenant = $1 AND id = $2', [tenant, id]);
      if (r.rowCount === 0) return false;
      await c.query('DELETE FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
      await c.query('DELETE FROM webhook_attempts WHERE endpoint_id = $1', [id]);
      return true;
    });
  }

  async tenantsWithEndpoints(): Promise<string[]> {
    const r = await this.pool.query<{ tenant: string }>(
      'SELECT DISTINCT tenant FROM webhook_endpoints ORDER BY tenant',
    );
    return r.rows.map((x) => x.tenant);
  }

  async recordEvent(ev: OutboxEvent, now: number): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      // The insert of a known id changes nothing: whoever inserted it first fans it out.
      const r = await c.query(
        `INSERT INTO webhook_events (event_id, tenant, type, body, occurred_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING`,
        [ev.eventId, ev.tenant, ev.type, ev.body, ev.occurredAt, now],
      );
      if (r.rowCount === 0) return false;
      const eps = await c.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE tenant = $1', [
        ev.tenant,
      ]);
      for (const ep of eps.rows.map(toEndpoint)) {
        if (!endpointTakes(ep, ev)) continue;
        await c.query(
          `INSERT INTO webhook_deliveries (endpoint_id, event_id, tenant, state, next_attempt_at, created_at)
           VALUES ($1, $2, $3, 'pending', $4, $4) ON CONFLICT DO NOTHING`,
          [ep.id, ev.eventId, ev.tenant, now],
        );
      }
      return true;
    });
  }

  async due(now: number, limit: number, perEndpoint: number): Promise<DeliveryKey[]> {
    const r = await this.pool.query<{ endpoint_id: string; event_id: string }>(
      numberedPlaceholders(DUE_SQL),
      [now, now, perEndpoint, limit],
    );
    return r.rows.map((x) => ({ endpointId: x.endpoint_id, eventId: x.event_id }));
  }

  async claim(key: DeliveryKey, now: number, leaseMs: number): Promise<DeliveryJob | undefined> {
    const until = now + leaseMs;
    // One statement: a concurrent claim waits for this row's lock, then finds it claimed.
    const r = await this.pool.query<{ url: string; secret: string; body: string; attempts: number }>(
      `WITH taken AS (
         UPDATE webhook_deliveries SET claimed_until = $3
         WHERE endpoint_id = $1 AND event_id = $2 AND state = 'pending'
           AND next_attempt_at <= $4 AND claimed_until <= $4
         RETURNING endpoint_id, event_id, attempts)
       SELECT e.url, e.secret, v.body, t.attempts FROM taken t
       JOIN webhook_endpoints e ON e.id = t.endpoint_id JOIN webhook_events v ON v.event_id = t.event_id`,
      [key.endpointId, key.eventId, until, now],
    );
    const row = r.rows[0];
    return row && { ...key, ...row, attempts: Number(row.attempts), claim: until };
  }

  async recordAttempt(
    job: DeliveryJob,
    a: AttemptRecord,
    state: DeliveryState,
    nextAttemptAt: number,
  ): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      const r = await c.query(
        `UPDATE webhook_deliveries SET state = $3, attempts = $4, next_attempt_at = $5, claimed_until = 0
         WHERE endpoint_id = $1 AND event_id = $2 AND claimed_until = $6`,
        [job.endpointId, job.eventId, state, a.n, nextAttemptAt, job.claim],
      );
      if (r.rowCount === 0) return false;
      await c.query(
        `INSERT INTO webhook_attempts (endpoint_id, event_id, n, at, status, answer, error, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
        [job.endpointId, job.eventId, a.n, a.at, a.status, a.answer, a.error, a.durationMs],
      );
      return true;
    });
  }

  async listDeliveries(endpointId: string, limit: number): Promise<DeliveryView[]> {
    const rows = await this.pool.query<DeliveryRow>(
      `SELECT d.endpoint_id, d.event_id, v.type, d.state, d.created_at, d.next_attempt_at
       FROM webhook_deliveries d JOIN webhook_events v ON v.event_id = d.event_id
       WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.event_id LIMIT $2`,
      [endpointId, limit],
    );
    const attempts = await this.pool.query<AttemptRow>(
      'SELECT * FROM webhook_attempts WHERE endpoint_id = $1 AND event_id = ANY($2)',
      [endpointId, rows.rows.map((r) => r.event_id)],
    );
    return toDeliveries(rows.rows, attempts.rows);
  }

  async claimScan(name: string, now: number, leaseMs: number) {
    await this.pool.query(
      'INSERT INTO webhook_scan (name, cursor_at, claimed_until) VALUES ($1, 0, 0) ON CONFLICT DO NOTHING',
      [name],
    );
    const r = await this.pool.query<{ cursor_at: string }>(
      `UPDATE webhook_scan SET claimed_until = $2 WHERE name = $1 AND claimed_until <= $3 RETURNING cursor_at`,
      [name, now + leaseMs, now],
    );
    const row = r.rows[0];
    if (!row) return null;
    const cursor = Number(row.cursor_at);
    return { cursor: cursor > 0 ? cursor : undefined, claim: now + leaseMs };
  }

  async renewScan(name: string, claim: number, cursor: number, until: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE webhook_scan SET cursor_at = GREATEST(cursor_at, $3), claimed_until = $4
       WHERE name = $1 AND claimed_until = $2`,
      [name, claim, cursor, until],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async finishScan(name: string, cursor: number): Promise<void> {
    await this.pool.query(
      'UPDATE webhook_scan SET cursor_at = GREATEST(cursor_at, $2), claimed_until = 0 WHERE name = $1',
      [name, cursor],
    );
  }

  async prune(now: number, batch = PRUNE_BATCH): Promise<number> {
    const cutoffs = pruneCutoffs(now);
    const removed = await inBatches(async () => {
      const r = await this.pool.query(PRUNE_DELIVERIES_PG, [cutoffs.deliveries, batch]);
      return r.rowCount ?? 0;
    }, batch);
    await inBatches(async () => {
      const r = await this.pool.query(numberedPlaceholders(PRUNE_EVENTS_SQL), [...cutoffs.events, batch]);
      return r.rowCount ?? 0;
    }, batch);
    return removed;
  }
}

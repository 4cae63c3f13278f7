import type Database from 'better-sqlite3';
import {
  DUE_SQL,
  endpointTakes,
  inBatches,
  PRUNE_BATCH,
  PRUNE_EVENTS_SQL,
  pruneCutoffs,
  toDeliveries,
  toEndpoint,
} from './webhooks';
import type {
  AttemptRecord,
  AttemptRow,
  DeliveryJob,
  DeliveryKey,
  DeliveryRow,
  DeliveryState,
  DeliveryView,
  EndpointRow,
  OutboxEvent,
  WebhookEndpoint,
  WebhookStore,
} from './webhooks';

/** Webhooks out in the API's SQLite file; each write that reads first is an IMMEDIATE transaction. */
export class SqliteWebhookStore implements WebhookStore {
  private readonly s;
  private readonly createTx;
  private readonly recordTx;
  private readonly attemptTx;
  private readonly deleteTx;
  private readonly scanTx;
  private readonly pruneDeliveriesTx;
  private readonly pruneEventsTx;

  constructor(db: Database.Database) {
    this.s = {
      count: db.prepare<[string], { n: number }>(
        'SELECT COUNT(*) AS n FROM webhook_endpoints WHERE tenant = ?',
      ),
      insertEndpoint: db.prepare(
        `INSERT INTO webhook_endpoints (id, tenant, url, events, description, secret, created_at)
         VALUES (@id, @tenant, @url, @events, @description, @secret, @createdAt)`,
      ),
      getEndpoint: db.prepare<[string, string], EndpointRow>(
        'SELECT * FROM webhook_endpoints WHERE tenant = ? AND id = ?',
      ),
      listEndpoints: db.prepare<[string], EndpointRow>(
        'SELECT * FROM webhook_endpoints WHERE tenant = ? ORDER BY created_at, id',
      ),
      deleteEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE tenant = ? AND id = ?'),
      deleteDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE endpoint_id = ?'),
      deleteAttempts: db.prepare('DELETE FROM webhook_attempts WHERE endpoint_id = ?'),
      tenants: db.prepare<[], { tenant: string }>(
        'SELECT DISTINCT tenant FROM webhook_endpoints ORDER BY tenant',
      ),
      insertEvent: db.prepare(
        `INSERT OR IGNORE INTO webhook_events (event_id, tenant, type, body, occurred_at, created_at)
         VALUES (@eventId, @tenant, @type, @body, @occurredAt, @now)`,
      ),
      insertDelivery: db.prepare(
        `INSERT OR IGNORE INTO webhook_deliveries (endpoint_id, event_id, tenant, state, next_attempt_at, created_at)
         VALUES (?, ?, ?, 'pending', ?, ?)`,
      ),
      due: db.prepare<[number, number, number, number], { endpoint_id: string; event_id: string }>(DUE_SQL),
      claim: db.prepare(
        `UPDATE webhook_deliveries SET claimed_until = @until
         WHERE endpoint_id = @endpointId AND event_id = @eventId AND state = 'pending'
           AND next_attempt_at <= @now AND claimed_until <= @now`,
      ),
      job: db.prepare<[string, string], { url: string; secret: string; body: string; attempts: number }>(
        `SELECT e.url, e.secret, v.body, d.attempts FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN webhook_events v ON v.event_id = d.event_id
         WHERE d.endpoint_id = ? AND d.event_id = ?`,
      ),
      finish: db.prepare(
        `UPDATE webhook_deliveries SET state = @state, attempts = @n, next_attempt_at = @next, claimed_until = 0
         WHERE endpoint_id = @endpointId AND event_id = @eventId AND claimed_until = @claim`,
      ),
      insertAttempt: db.prepare(
        `INSERT OR IGNORE INTO webhook_attempts (endpoint_id, event_id, n, at, status, answer, error, duration_ms)
         VALUES (@endpointId, @eventId, @n, @at, @status, @answer, @error, @durationMs)`,
      ),
      deliveries: db.prepare<[string, number], DeliveryRow>(
        `SELECT d.endpoint_id, d.event_id, v.type, d.state, d.created_at, d.next_attempt_at
         FROM webhook_deliveries d JOIN webhook_events v ON v.event_id = d.event_id
         WHERE d.endpoint_id = ? ORDER BY d.created_at DESC, d.event_id LIMIT ?`,
      ),
      attempts: db.prepare<[string, string], AttemptRow>(
        'SELECT * FROM webhook_attempts WHERE endpoint_id = ? AND event_id = ?',
      ),
      getScan: db.prepare<[string], { cursor_at: number; claimed_until: number }>(
        'SELECT cursor_at, claimed_until FROM webhook_scan WHERE name = ?',
      ),
      putScan: db.prepare(
        `INSERT INTO webhook_scan (name, cursor_at, claimed_until) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET claimed_until = excluded.claimed_until`,
      ),
      renewScan: db.prepare(
        `UPDATE webhook_scan SET cursor_at = MAX(cursor_at, @cursor), claimed_until = @until
         WHERE name = @name AND claimed_until = @claim`,
      ),
      finishScan: db.prepare(
        'UPDATE webhook_scan SET cursor_at = MAX(cursor_at, ?), claimed_until = 0 WHERE name = ?',
      ),
    };

    const create = (ep: WebhookEndpoint, secret: string, max: number): boolean => {
      if (this.s.count.get(ep.tenant)!.n >= max) return false;
      this.s.insertEndpoint.run({ ...ep, events: JSON.stringify(ep.events), secret });
      return true;
    };
    const createTx = db.transaction(create);
    this.createTx = (...a: Parameters<typeof create>) => createTx.immediate(...a);

    const record = (ev: OutboxEvent, now: number): boolean => {
      if (this.s.insertEvent.run({ ...ev, now }).changes === 0) return false;
      for (const ep of this.s.listEndpoints.all(ev.tenant).map(toEndpoint))
        if (endpointTakes(ep, ev)) this.s.insertDelivery.run(ep.id, ev.eventId, ev.tenant, now, now);
      return true;
    };
    const recordTx = db.transaction(record);
    this.recordTx = (...a: Parameters<typeof record>) => recordTx.immediate(...a);

    const attempt = (job: DeliveryJob, a: AttemptRecord, state: DeliveryState, next: number): boolean => {
      const key = { endpointId: job.endpointId, eventId: job.eventId };
      if (this.s.finish.run({ ...key, state, n: a.n, next, claim: job.claim }).changes === 0) return false;
      this.s.insertAttempt.run({ ...key, ...a });
      return true;
    };
    const attemptTx = db.transaction(attempt);
    this.attemptTx = (...a: Parameters<typeof attempt>) => attemptTx.immediate(...a);

    const del = (tenant: string, id: string): boolean => {
      if (this.s.deleteEndpoint.run(tenant, id).changes === 0) return false;
      this.s.deleteDeliveries.run(id);
      this.s.deleteAttempts.run(id);
      return true;
    };
    const deleteTx = db.transaction(del);
    this.deleteTx = (...a: Parameters<typeof del>) => deleteTx.immediate(...a);

    const scan = (name: string, now: number, leaseMs: number) => {
      const row = this.s.getScan.get(name);
      if (row && row.claimed_until > now) return null;
      this.s.putScan.run(name, row?.cursor_at ?? 0, now + leaseMs);
      return { cursor: row && row.cursor_at > 0 ? row.cursor_at : undefined, claim: now + leaseMs };
    };
    // Inside one IMMEDIATE transaction both statements pick the same batch (no other writer).
    const batchOf = `(endpoint_id, event_id) IN (SELECT endpoint_id, event_id FROM webhook_deliveries
       WHERE state <> 'pending' AND created_at < ? ORDER BY endpoint_id, event_id LIMIT ?)`;
    const pruneAttempts = db.prepare(`DELETE FROM webhook_attempts WHERE ${batchOf}`);
    const pruneDeliveries = db.prepare(`DELETE FROM webhook_deliveries WHERE ${batchOf}`);
    const pruneEvents = db.prepare(PRUNE_EVENTS_SQL);
    const deliveriesTx = db.transaction((cutoff: number, batch: number) => {
      pruneAttempts.run(cutoff, batch);
      return pruneDeliveries.run(cutoff, batch).changes;
    });
    this.pruneDeliveriesTx = (cutoff: number, batch: number) => deliveriesTx.immediate(cutoff, batch);
    this.pruneEventsTx = (cutoffs: [number, number], batch: number) =>
      pruneEvents.run(...cutoffs, batch).changes;
    const scanTx = db.transaction(scan);
    this.scanTx = (...a: Parameters<typeof scan>) => scanTx.immediate(...a);
  }

  async createEndpoint(ep: WebhookEndpoint, secret: string, maxPerTenant: number): Promise<boolean> {
    return this.createTx(ep, secret, maxPerTenant);
  }

  async getEndpoint(tenant: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = this.s.getEndpoint.get(tenant, id);
    return row && toEndpoint(row);
  }

  async listEndpoints(tenant: string): Promise<WebhookEndpoint[]> {
    return this.s.listEndpoints.all(tenant).map(toEndpoint);
  }

  async deleteEndpoint(tenant: string, id: string): Promise<boolean> {
    return this.deleteTx(tenant, id);
  }

  async tenantsWithEndpoints(): Promise<string[]> {
    return this.s.tenants.all().map((r) => r.tenant);
  }

  async recordEvent(ev: OutboxEvent, now: number): Promise<boolean> {
    return this.recordTx(ev, now);
  }

  async due(now: number, limit: number, perEndpoint: number): Promise<DeliveryKey[]> {
    return this.s.due
      .all(now, now, perEndpoint, limit)
      .map((r) => ({ endpointId: r.endpoint_id, eventId: r.event_id }));
  }

  async claim(key: DeliveryKey, now: number, leaseMs: number): Promise<DeliveryJob | undefined> {
    const until = now + leaseMs;
    if (this.s.claim.run({ ...key, now, until }).changes === 0) return undefined;
    const row = this.s.job.get(key.endpointId, key.eventId);
    return row && { ...key, ...row, attempts: Number(row.attempts), claim: until };
  }

  async recordAttempt(
    job: DeliveryJob,
    attempt: AttemptRecord,
    state: DeliveryState,
    nextAttemptAt: number,
  ): Promise<boolean> {
    return this.attemptTx(job, attempt, state, nextAttemptAt);
  }

  async listDeliveries(endpointId: string, limit: number): Promise<DeliveryView[]> {
    const rows = this.s.deliveries.all(endpointId, limit);
    return toDeliveries(
      rows,
      rows.flatMap((r) => this.s.attempts.all(endpointId, r.event_id)),
    );
  }

  async claimScan(name: string, now: number, leaseMs: number) {
    return this.scanTx(name, now, leaseMs);
  }

  async renewScan(name: string, claim: number, cursor: number, until: number): Promise<boolean> {
    return this.s.renewScan.run({ name, claim, cursor, until }).changes > 0;
  }

  async finishScan(name: string, cursor: number): Promise<void> {
    this.s.finishScan.run(cursor, name);
  }

  async prune(now: number, batch = PRUNE_BATCH): Promise<number> {
    const cutoffs = pruneCutoffs(now);
    const removed = await inBatches(() => this.pruneDeliveriesTx(cutoffs.deliveries, batch), batch);
    await inBatches(() => this.pruneEventsTx(cutoffs.events, batch), batch);
    return removed;
  }
}

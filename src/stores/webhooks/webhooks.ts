import type { WebhookEventType } from '../../contract/webhooks';

export type { WebhookEventType } from '../../contract/webhooks';

/**
 * Webhooks out, in the API's store (SQLite or PostgreSQL): the tenants' endpoints, the outbox of run
 * events, one delivery per (endpoint, event) with its attempts, and the visibility scan's cursor.
 *
 * An event's id is derived from what it is about (the run execution, the batch's outcome), so an event
 * seen twice (by a rescan, or by two API processes) is one row: the insert of a known id changes
 * nothing. A delivery is claimed exclusively by a conditional update before it is sent; an attempt is
 * recorded only by the claim's holder. Secrets are stored as they are (signing needs them).
 */

export const WEBHOOKS_DDL = `
  CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    secret      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS webhook_endpoints_tenant ON webhook_endpoints (tenant);
  CREATE TABLE IF NOT EXISTS webhook_events (
    event_id    TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    type        TEXT NOT NULL,
    body        TEXT NOT NULL,
    occurred_at INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS webhook_deliveries (
    endpoint_id     TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    tenant          TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    claimed_until   INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (endpoint_id, event_id)
  );
  CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
  CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
  CREATE INDEX IF NOT EXISTS webhook_events_created ON webhook_events (created_at);
  CREATE TABLE IF NOT EXISTS webhook_attempts (
    endpoint_id TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    n           INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    status      INTEGER,
    answer      TEXT NOT NULL DEFAULT '',
    error       TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (endpoint_id, event_id, n)
  );
  CREATE TABLE IF NOT EXISTS webhook_scan (
    name          TEXT PRIMARY KEY,
    cursor_at     INTEGER NOT NULL,
    claimed_until INTEGER NOT NULL DEFAULT 0
  );`;

/** Finished deliveries (and their attempts) are kept this long (ms) after they were created. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * A gate's event is kept longer: the gate may still be waiting, and a forgotten event would be
 * announced again by the next scan.
 */
export const GATE_EVENT_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * The due deliveries, at most `?` (3rd) per endpoint, oldest first, at most `?` (4th): the same on
 * both engines (`?`: now twice, the per-endpoint cap, the limit).
 */
export const DUE_SQL = `SELECT endpoint_id, event_id FROM (
    SELECT endpoint_id, event_id, next_attempt_at,
      ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, event_id) AS k
    FROM webhook_deliveries
    WHERE state = 'pending' AND next_attempt_at <= ? AND claimed_until <= ?) t
  WHERE k <= ? ORDER BY next_attempt_at, endpoint_id, event_id LIMIT ?`;

/** Rows one pruning statement deletes at most; a prune runs batches until one deletes fewer. */
export const PRUNE_BATCH = 500;
/** Batches one prune runs at most; what is left waits for the next prune. */
export const PRUNE_MAX_BATCHES = 200;

/**
 * A batch of old events no delivery is left for (`?`: the event cutoff, the gate cutoff, the batch
 * size), the same on both engines; served by the indexes on webhook_events (created_at) and
 * webhook_deliveries (event_id).
 */
export const PRUNE_EVENTS_SQL = `DELETE FROM webhook_events WHERE event_id IN (
  SELECT v.event_id FROM webhook_events v
  WHERE v.created_at < ? AND (v.type <> 'run.awaiting_approval' OR v.created_at < ?)
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.event_id)
  LIMIT ?)`;

/** The parameters at `now`: the delivery cutoff, then PRUNE_EVENTS_SQL's two cutoffs. */
export const pruneCutoffs = (now: number): { deliveries: number; events: [number, number] } => ({
  deliveries: now - DELIVERY_RETENTION_MS,
  events: [now - DELIVERY_RETENTION_MS, now - GATE_EVENT_RETENTION_MS],
});

/**
 * Runs `step` (one batch, returning the rows it deleted) until a batch deletes fewer than `batch` or
 * PRUNE_MAX_BATCHES ran, yielding to the event loop between batches; returns the rows deleted.
 */
export async function inBatches(step: () => number | Promise<number>, batch: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < PRUNE_MAX_BATCHES; i += 1) {
    const n = await step();
    total += n;
    if (n < batch) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return total;
}

/** The longest answer body an attempt keeps (characters). */
export const MAX_ANSWER_CHARS = 1024;

export interface WebhookEndpoint {
  id: string;
  tenant: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  createdAt: number;
}

/** One event of the outbox: `body` is the exact JSON every attempt of every delivery sends. */
export interface OutboxEvent {
  eventId: string;
  tenant: string;
  type: WebhookEventType;
  body: string;
  /** When it happened (ms); endpoints registered later do not get it. */
  occurredAt: number;
}

export interface DeliveryKey {
  endpointId: string;
  eventId: string;
}

/** What a claimed delivery needs to be sent; `claim` is the token that records its attempt. */
export interface DeliveryJob extends DeliveryKey {
  url: string;
  secret: string;
  body: string;
  attempts: number;
  claim: number;
}

export interface AttemptRecord {
  n: number;
  at: number;
  /** The HTTP status answered; null when none came (refused, reset, timed out). */
  status: number | null;
  /** The first MAX_ANSWER_CHARS characters of the answer's body. */
  answer: string;
  error: string | null;
  durationMs: number;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface DeliveryView extends DeliveryKey {
  type: WebhookEventType;
  state: DeliveryState;
  createdAt: number;
  nextAttemptAt: number | null;
  attempts: AttemptRecord[];
}

export interface ScanClaim {
  cursor: number | undefined;
  claim: number;
}

export interface WebhookStore {
  /** Adds an endpoint unless the tenant already holds `maxPerTenant` (then false, nothing added). */
  createEndpoint(ep: WebhookEndpoint, secret: string, maxPerTenant: number): Promise<boolean>;
  getEndpoint(tenant: string, id: string): Promise<WebhookEndpoint | undefined>;
  listEndpoints(tenant: string): Promise<WebhookEndpoint[]>;
  /** Removes the endpoint with its deliveries and attempts; false when the tenant has no such one. */
  deleteEndpoint(tenant: string, id: string): Promise<boolean>;
  /** The tenants holding at least one endpoint. */
  tenantsWithEndpoints(): Promise<string[]>;
  /**
   * Records the event once, with a pending delivery to each of its tenant's endpoints that subscribe
   * to its type and existed when it occurred; true when it was new.
   */
  recordEvent(ev: OutboxEvent, now: number): Promise<boolean>;
  /**
   * Deliveries due at `now` (pending, not claimed), oldest first, at most `perEndpoint` of any one
   * endpoint (so one endpoint's backlog cannot fill the `limit`).
   */
  due(now: number, limit: number, perEndpoint: number): Promise<DeliveryKey[]>;
  /** Takes a due delivery for `leaseMs`; undefined when it is not due or another holds it. */
  claim(key: DeliveryKey, now: number, leaseMs: number): Promise<DeliveryJob | undefined>;
  /**
   * Records an attempt of a claimed delivery and its next state (pending again from `nextAttemptAt`,
   * delivered or failed), releasing the claim; false (nothing recorded) when the claim was lost.
   */
  recordAttempt(
    job: DeliveryJob,
    attempt: AttemptRecord,
    state: DeliveryState,
    nextAttemptAt: number,
  ): Promise<boolean>;
  /** The endpoint's deliveries, newest first, each with its attempts in order. */
  listDeliveries(endpointId: string, limit: number): Promise<DeliveryView[]>;
  /**
   * Takes the visibility scan for `leaseMs` when no process holds it: its cursor (ms; undefined the
   * first time) and the claim's token (for renewScan), or null when another process scans.
   */
  claimScan(name: string, now: number, leaseMs: number): Promise<ScanClaim | null>;
  /**
   * Moves the cursor to `cursor` (never back) and holds the scan until `until` (the new token), if
   * `claim` is still the scan's token; false (nothing changed) when the claim was lost.
   */
  renewScan(name: string, claim: number, cursor: number, until: number): Promise<boolean>;
  /** Ends a scan: the cursor moves to `cursor` (never back) and the claim is released. */
  finishScan(name: string, cursor: number): Promise<void>;
  /**
   * Deletes what the retentions (DELIVERY_RETENTION_MS, GATE_EVENT_RETENTION_MS) let go, in
   * transactions of at most `batch` rows (PRUNE_BATCH); returns deliveries removed.
   */
  prune(now: number, batch?: number): Promise<number>;
}

/** An endpoint row as either engine returns it (PostgreSQL's BIGINT arrives as a string). */
export interface EndpointRow {
  id: string;
  tenant: string;
  url: string;
  events: string;
  description: string;
  created_at: number | string;
}

export const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  tenant: r.tenant,
  url: r.url,
  events: JSON.parse(r.events) as WebhookEventType[],
  description: r.description,
  createdAt: Number(r.created_at),
});

export interface DeliveryRow {
  endpoint_id: string;
  event_id: string;
  type: WebhookEventType;
  state: DeliveryState;
  created_at: number | string;
  next_attempt_at: number | string;
}

export interface AttemptRow {
  endpoint_id: string;
  event_id: string;
  n: number;
  at: number | string;
  status: number | null;
  answer: string;
  error: string | null;
  duration_ms: number | string;
}

export const toAttempt = (r: AttemptRow): AttemptRecord => ({
  n: Number(r.n),
  at: Number(r.at),
  status: r.status === null ? null : Number(r.status),
  answer: r.answer,
  error: r.error,
  durationMs: Number(r.duration_ms),
});

/** Deliveries with their attempts (the attempts of any of them, in any order). */
export function toDeliveries(rows: DeliveryRow[], attempts: AttemptRow[]): DeliveryView[] {
  const byEvent = new Map<string, AttemptRecord[]>();
  for (const a of attempts) {
    const list = byEvent.get(a.event_id) ?? [];
    list.push(toAttempt(a));
    byEvent.set(a.event_id, list);
  }
  return rows.map((r) => ({
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    type: r.type,
    state: r.state,
    createdAt: Number(r.created_at),
    nextAttemptAt: r.state === 'pending' ? Number(r.next_attempt_at) : null,
    attempts: (byEvent.get(r.event_id) ?? []).sort((a, b) => a.n - b.n),
  }));
}

/** Whether the endpoint takes the event: it subscribes to the type and existed when it occurred. */
export const endpointTakes = (ep: WebhookEndpoint, ev: OutboxEvent): boolean =>
  ep.events.includes(ev.type) && ep.createdAt <= ev.occurredAt;

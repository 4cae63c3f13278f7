import type Database from 'better-sqlite3';
import type { EventEnvelope, TriggerSpec } from '../../events/triggers';
import type { Refusal } from '../../scheduler/types';

/**
 * Events, their runs, triggers and webhook secrets, in the API's SQLite file.
 *
 * Webhook secrets are stored as they are: verifying an HMAC needs the secret itself (a hash cannot
 * verify one), and encrypting them with a key kept next to this file would add nothing; protect the
 * file (and its disk) as you protect the API keys' store. They are never returned after creation.
 */
export const EVENT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 1000;

export const EVENTS_DDL = `
  CREATE TABLE IF NOT EXISTS webhook_secrets (
    tenant     TEXT NOT NULL,
    source     TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, source)
  );
  CREATE TABLE IF NOT EXISTS triggers (
    tenant     TEXT NOT NULL,
    name       TEXT NOT NULL,
    spec       TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, name)
  );
  CREATE TABLE IF NOT EXISTS events (
    tenant          TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    body_hash       TEXT NOT NULL,
    envelope        TEXT NOT NULL,
    received_at     INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'settled')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    claimed_until   INTEGER NOT NULL DEFAULT 0,
    replays         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, event_id)
  );
  CREATE INDEX IF NOT EXISTS events_due ON events (state, next_attempt_at);
  CREATE INDEX IF NOT EXISTS events_received ON events (received_at);
  CREATE TABLE IF NOT EXISTS event_runs (
    tenant           TEXT NOT NULL,
    event_id         TEXT NOT NULL,
    trigger          TEXT NOT NULL,
    run_id           TEXT NOT NULL,
    agent            TEXT NOT NULL,
    priority         TEXT NOT NULL,
    input            TEXT NOT NULL,
    estimated_tokens INTEGER NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'started', 'refused', 'invalid_input')),
    refusal          TEXT,
    updated_at       INTEGER NOT NULL,
    PRIMARY KEY (tenant, event_id, trigger)
  );`;

export type EventRunStatus = 'pending' | 'started' | 'refused' | 'invalid_input';

/** Why an event's run was not started: the scheduler's refusal, or a trigger input that is not valid. */
export type RunRefusal = Omit<Refusal, 'code'> & { code: Refusal['code'] | 'invalid_input' };

export interface EventRunRecord {
  trigger: string;
  runId: string;
  agent: string;
  priority: TriggerSpec['priority'];
  input: unknown;
  estimatedTokens: number;
  status: EventRunStatus;
  refusal: RunRefusal | null;
  updatedAt: number;
}

export interface EventRecord {
  tenant: string;
  eventId: string;
  bodyHash: string;
  envelope: EventEnvelope;
  receivedAt: number;
  state: 'pending' | 'settled';
  attempts: number;
  nextAttemptAt: number;
  replays: number;
  runs: EventRunRecord[];
}

export type NewEventRun = Omit<EventRunRecord, 'updatedAt' | 'refusal'> & { refusal?: RunRefusal | null };

interface EventRow {
  tenant: string;
  event_id: string;
  body_hash: string;
  envelope: string;
  received_at: number;
  state: 'pending' | 'settled';
  attempts: number;
  next_attempt_at: number;
  claimed_until: number;
  replays: number;
}

interface RunRow {
  trigger: string;
  run_id: string;
  agent: string;
  priority: TriggerSpec['priority'];
  input: string;
  estimated_tokens: number;
  status: EventRunStatus;
  refusal: string | null;
  updated_at: number;
}

const toRun = (r: RunRow): EventRunRecord => ({
  trigger: r.trigger,
  runId: r.run_id,
  agent: r.agent,
  priority: r.priority,
  input: JSON.parse(r.input) as unknown,
  estimatedTokens: r.estimated_tokens,
  status: r.status,
  refusal: r.refusal ? (JSON.parse(r.refusal) as RunRefusal) : null,
  updatedAt: r.updated_at,
});

export type RecordResult = { created: true; event: EventRecord } | { created: false; event: EventRecord };

export class EventStore {
  private readonly stmts;
  private readonly recordTx;
  private readonly claimTx;
  private lastPruneAt = 0;

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      getEvent: db.prepare<[string, string], EventRow>(
        'SELECT * FROM events WHERE tenant = ? AND event_id = ?',
      ),
      runsOf: db.prepare<[string, string], RunRow>(
        'SELECT * FROM event_runs WHERE tenant = ? AND event_id = ? ORDER BY trigger',
      ),
      insertEvent: db.prepare(
        `INSERT OR REPLACE INTO events (tenant, event_id, body_hash, envelope, received_at, state, attempts,
           next_attempt_at, claimed_until, replays)
         VALUES (@tenant, @eventId, @bodyHash, @envelope, @receivedAt, @state, 0, @receivedAt, 0, 0)`,
      ),
      deleteRuns: db.prepare('DELETE FROM event_runs WHERE tenant = ? AND event_id = ?'),
      insertRun: db.prepare(
        `INSERT OR IGNORE INTO event_runs (tenant, event_id, trigger, run_id, agent, priority, input,
           estimated_tokens, status, refusal, updated_at)
         VALUES (@tenant, @eventId, @trigger, @runId, @agent, @priority, @input, @estimatedTokens, @status,
           @refusal, @updatedAt)`,
      ),
      updateRun: db.prepare(
        `UPDATE event_runs SET status = @status, refusal = @refusal, updated_at = @updatedAt
         WHERE tenant = @tenant AND event_id = @eventId AND trigger = @trigger`,
      ),
      claim: db.prepare(
        `UPDATE events SET claimed_until = @until
         WHERE tenant = @tenant AND event_id = @eventId AND state = 'pending' AND claimed_until <= @now
           AND (next_attempt_at <= @now OR @force = 1)`,
      ),
      finish: db.prepare(
        `UPDATE events SET state = @state, attempts = @attempts, next_attempt_at = @nextAttemptAt, claimed_until = 0
         WHERE tenant = @tenant AND event_id = @eventId`,
      ),
      reopen: db.prepare(
        `UPDATE events SET state = 'pending', attempts = 0, next_attempt_at = @now, replays = replays + 1
         WHERE tenant = @tenant AND event_id = @eventId`,
      ),
      due: db.prepare<[number, number, number], { tenant: string; event_id: string }>(
        `SELECT tenant, event_id FROM events
         WHERE state = 'pending' AND next_attempt_at <= ? AND claimed_until <= ?
         ORDER BY next_attempt_at LIMIT ?`,
      ),
      list: db.prepare<[string, number, number], EventRow>(
        'SELECT * FROM events WHERE tenant = ? AND received_at < ? ORDER BY received_at DESC LIMIT ?',
      ),
      prune: db.prepare(`DELETE FROM events WHERE state = 'settled' AND received_at < ?`),
      pruneRuns: db.prepare(
        `DELETE FROM event_runs WHERE NOT EXISTS
           (SELECT 1 FROM events e WHERE e.tenant = event_runs.tenant AND e.event_id = event_runs.event_id)`,
      ),
      getSecret: db.prepare<[string, string], { secret: string }>(
        'SELECT secret FROM webhook_secrets WHERE tenant = ? AND source = ?',
      ),
      putSecret: db.prepare(
        `INSERT OR REPLACE INTO webhook_secrets (tenant, source, secret, created_at) VALUES (?, ?, ?, ?)`,
      ),
      deleteSecret: db.prepare('DELETE FROM webhook_secrets WHERE tenant = ? AND source = ?'),
      listSecrets: db.prepare<[string], { source: string; created_at: number }>(
        'SELECT source, created_at FROM webhook_secrets WHERE tenant = ? ORDER BY source',
      ),
      getTrigger: db.prepare<[string, string], { spec: string; updated_at: number }>(
        'SELECT spec, updated_at FROM triggers WHERE tenant = ? AND name = ?',
      ),
      putTrigger: db.prepare(
        'INSERT OR REPLACE INTO triggers (tenant, name, spec, updated_at) VALUES (?, ?, ?, ?)',
      ),
      deleteTrigger: db.prepare('DELETE FROM triggers WHERE tenant = ? AND name = ?'),
      listTriggers: db.prepare<[string], { name: string; spec: string; updated_at: number }>(
        'SELECT name, spec, updated_at FROM triggers WHERE tenant = ? ORDER BY name',
      ),
    };

    const record = (
      ev: { tenant: string; eventId: string; bodyHash: string; envelope: EventEnvelope; receivedAt: number },
      runsFor: () => NewEventRun[],
    ): RecordResult => {
      const existing = this.stmts.getEvent.get(ev.tenant, ev.eventId);
      if (existing && existing.received_at >= ev.receivedAt - EVENT_RETENTION_MS) {
        return { created: false, event: this.toEvent(existing) };
      }
      this.stmts.deleteRuns.run(ev.tenant, ev.eventId);
      const runs = runsFor();
      const settled = runs.every((r) => r.status !== 'pending');
      this.stmts.insertEvent.run({
        tenant: ev.tenant,
        eventId: ev.eventId,
        bodyHash: ev.bodyHash,
        envelope: JSON.stringify(ev.envelope),
        receivedAt: ev.receivedAt,
        state: settled ? 'settled' : 'pending',
      });
      for (const r of runs) this.insertRun(ev.tenant, ev.eventId, r, ev.receivedAt);
      return { created: true, event: this.get(ev.tenant, ev.eventId)! };
    };
    const recordTx = db.transaction(record);
    // IMMEDIATE: two API processes sharing the file cannot both record the same event.
    this.recordTx = (...args: Parameters<typeof record>) => recordTx.immediate(...args);
    const claimTx = db.transaction(
      (tenant: string, eventId: string, now: number, leaseMs: number, force: boolean) =>
        this.stmts.claim.run({ tenant, eventId, now, until: now + leaseMs, force: force ? 1 : 0 }).changes ===
        1,
    );
    this.claimTx = (tenant: string, eventId: string, now: number, leaseMs: number, force: boolean) =>
      claimTx.immediate(tenant, eventId, now, leaseMs, force);
  }

  private insertRun(tenant: string, eventId: string, r: NewEventRun, now: number): void {
    this.stmts.insertRun.run({
      tenant,
      eventId,
      trigger: r.trigger,
      runId: r.runId,
      agent: r.agent,
      priority: r.priority,
      input: JSON.stringify(r.input ?? null),
      estimatedTokens: r.estimatedTokens,
      status: r.status,
      refusal: r.refusal ? JSON.stringify(r.refusal) : null,
      updatedAt: now,
    });
  }

  private toEvent(row: EventRow): EventRecord {
    return {
      tenant: row.tenant,
      eventId: row.event_id,
      bodyHash: row.body_hash,
      envelope: JSON.parse(row.envelope) as EventEnvelope,
      receivedAt: row.received_at,
      state: row.state,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at,
      replays: row.replays,
      runs: this.stmts.runsOf.all(row.tenant, row.event_id).map(toRun),
    };
  }

  /**
   * Records a new event and the runs its triggers make (decided inside the same transaction), or returns
   * the event already recorded under this id within the retention window. Durable once it returns.
   */
  record(
    ev: { tenant: string; eventId: string; bodyHash: string; envelope: EventEnvelope; receivedAt: number },
    runsFor: () => NewEventRun[],
  ): RecordResult {
    this.pruneLazily(ev.receivedAt);
    return this.recordTx(ev, runsFor);
  }

  get(tenant: string, eventId: string): EventRecord | undefined {
    const row = this.stmts.getEvent.get(tenant, eventId);
    return row && this.toEvent(row);
  }

  /** The tenant's events received before `before` (ms), newest first. */
  list(tenant: string, before: number, limit: number): EventRecord[] {
    return this.stmts.list.all(tenant, before, limit).map((r) => this.toEvent(r));
  }

  /** Takes the event for dispatch for `leaseMs` (false when settled, not yet due, or taken by another). */
  claim(tenant: string, eventId: string, now: number, leaseMs: number, force = false): boolean {
    return this.claimTx(tenant, eventId, now, leaseMs, force);
  }

  updateRun(
    tenant: string,
    eventId: string,
    trigger: string,
    status: EventRunStatus,
    refusal: RunRefusal | null,
    now: number,
  ): void {
    this.stmts.updateRun.run({
      tenant,
      eventId,
      trigger,
      status,
      refusal: refusal ? JSON.stringify(refusal) : null,
      updatedAt: now,
    });
  }

  /** Ends a dispatch: settled, or pending again from `nextAttemptAt`; releases the claim. */
  finish(
    tenant: string,
    eventId: string,
    state: 'pending' | 'settled',
    attempts: number,
    nextAttemptAt: number,
  ): void {
    this.stmts.finish.run({ tenant, eventId, state, attempts, nextAttemptAt });
  }

  /** A replay: adds runs for triggers that match now and did not before, and makes the event due again. */
  reopen(tenant: string, eventId: string, newRuns: NewEventRun[], now: number): void {
    const tx = this.db.transaction(() => {
      for (const r of newRuns) this.insertRun(tenant, eventId, r, now);
      this.stmts.reopen.run({ tenant, eventId, now });
    });
    tx.immediate();
  }

  /** Events due for dispatch at `now` (pending, not claimed), oldest first. */
  due(now: number, limit: number): { tenant: string; eventId: string }[] {
    return this.stmts.due.all(now, now, limit).map((r) => ({ tenant: r.tenant, eventId: r.event_id }));
  }

  secretFor(tenant: string, source: string): string | undefined {
    return this.stmts.getSecret.get(tenant, source)?.secret;
  }

  putSecret(tenant: string, source: string, secret: string, now: number): void {
    this.stmts.putSecret.run(tenant, source, secret, now);
  }

  deleteSecret(tenant: string, source: string): boolean {
    return this.stmts.deleteSecret.run(tenant, source).changes === 1;
  }

  listSecrets(tenant: string): { source: string; createdAt: number }[] {
    return this.stmts.listSecrets.all(tenant).map((r) => ({ source: r.source, createdAt: r.created_at }));
  }

  getTrigger(tenant: string, name: string): { spec: TriggerSpec; updatedAt: number } | undefined {
    const row = this.stmts.getTrigger.get(tenant, name);
    return row && { spec: JSON.parse(row.spec) as TriggerSpec, updatedAt: row.updated_at };
  }

  putTrigger(tenant: string, name: string, spec: TriggerSpec, now: number): boolean {
    const existed = this.stmts.getTrigger.get(tenant, name) !== undefined;
    this.stmts.putTrigger.run(tenant, name, JSON.stringify(spec), now);
    return !existed;
  }

  deleteTrigger(tenant: string, name: string): boolean {
    return this.stmts.deleteTrigger.run(tenant, name).changes === 1;
  }

  listTriggers(tenant: string): { name: string; spec: TriggerSpec; updatedAt: number }[] {
    return this.stmts.listTriggers
      .all(tenant)
      .map((r) => ({ name: r.name, spec: JSON.parse(r.spec) as TriggerSpec, updatedAt: r.updated_at }));
  }

  /** Deletes settled events (and their runs) older than the retention; returns how many events. */
  prune(now: number): number {
    this.lastPruneAt = now;
    const n = this.stmts.prune.run(now - EVENT_RETENTION_MS).changes;
    if (n > 0) this.stmts.pruneRuns.run();
    return n;
  }

  private pruneLazily(now: number): void {
    if (now - this.lastPruneAt >= PRUNE_EVERY_MS) this.prune(now);
  }
}

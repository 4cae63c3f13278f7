import type Database from 'better-sqlite3';
import type { TriggerSpec } from '../../contract/triggers';
import { EVENT_RETENTION_MS, runParams, toEvent, toTrigger, triggerText } from './event-store';
import type {
  EventRecord,
  EventRow,
  EventRunStatus,
  EventStore,
  NewEvent,
  NewEventRun,
  RecordResult,
  RunRefusal,
  RunRow,
  TriggerEntry,
} from './event-store';
import { LazyPrune } from '../idempotency/idempotency';

/** Schema v9: event_runs gain the `fairness_key` column (the runs recorded before it have none). */
export function migrateEvents(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(event_runs)').all();
  if (!columns.some((c) => c.name === 'fairness_key'))
    db.exec('ALTER TABLE event_runs ADD COLUMN fairness_key TEXT');
}

/** The event store in the API's SQLite file. */
export class SqliteEventStore implements EventStore {
  private readonly stmts;
  private readonly recordTx;
  private readonly claimTx;
  private readonly pruner = new LazyPrune((now) => this.pruneNow(now));

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      getEvent: db.prepare<[string, string], EventRow>(
        'SELECT * FROM events WHERE tenant = ? AND event_id = ?',
      ),
      // BINARY collation: [id + sep, id + sep + 1) holds exactly the keys that start with id + sep.
      findById: db.prepare<[string, string, string, string, number], EventRow>(
        `SELECT * FROM events WHERE tenant = ? AND (event_id = ? OR (event_id >= ? AND event_id < ?))
         ORDER BY received_at DESC LIMIT ?`,
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
           estimated_tokens, fairness_key, status, refusal, updated_at)
         VALUES (@tenant, @eventId, @trigger, @runId, @agent, @priority, @input, @estimatedTokens,
           @fairnessKey, @status, @refusal, @updatedAt)`,
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
      renewClaim: db.prepare(
        `UPDATE events SET claimed_until = @until
         WHERE tenant = @tenant AND event_id = @eventId AND state = 'pending' AND claimed_until = @from`,
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

    const record = (ev: NewEvent, runsFor: (triggers: TriggerEntry[]) => NewEventRun[]): RecordResult => {
      const existing = this.stmts.getEvent.get(ev.tenant, ev.eventId);
      if (existing && Number(existing.received_at) >= ev.receivedAt - EVENT_RETENTION_MS) {
        return { created: false, event: this.eventOf(existing) };
      }
      this.stmts.deleteRuns.run(ev.tenant, ev.eventId);
      const runs = runsFor(this.triggersOf(ev.tenant));
      const settled = runs.every((r) => r.status !== 'pending');
      this.stmts.insertEvent.run({
        tenant: ev.tenant,
        eventId: ev.eventId,
        bodyHash: ev.bodyHash,
        envelope: JSON.stringify(ev.envelope),
        receivedAt: ev.receivedAt,
        state: settled ? 'settled' : 'pending',
      });
      for (const r of runs) this.stmts.insertRun.run(runParams(ev.tenant, ev.eventId, r, ev.receivedAt));
      return { created: true, event: this.eventOf(this.stmts.getEvent.get(ev.tenant, ev.eventId)!) };
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

  private eventOf(row: EventRow): EventRecord {
    return toEvent(row, this.stmts.runsOf.all(row.tenant, row.event_id));
  }

  private triggersOf(tenant: string): TriggerEntry[] {
    return this.stmts.listTriggers.all(tenant).map(toTrigger);
  }

  async record(ev: NewEvent, runsFor: (triggers: TriggerEntry[]) => NewEventRun[]): Promise<RecordResult> {
    this.pruner.maybe(ev.receivedAt);
    return this.recordTx(ev, runsFor);
  }

  async get(tenant: string, eventId: string): Promise<EventRecord | undefined> {
    const row = this.stmts.getEvent.get(tenant, eventId);
    return row && this.eventOf(row);
  }

  async findById(tenant: string, id: string, sep: string, limit: number): Promise<EventRecord[]> {
    const next = String.fromCharCode(sep.charCodeAt(0) + 1);
    return this.stmts.findById
      .all(tenant, id, `${id}${sep}`, `${id}${next}`, limit)
      .map((r) => this.eventOf(r));
  }

  async list(tenant: string, before: number, limit: number): Promise<EventRecord[]> {
    return this.stmts.list.all(tenant, before, limit).map((r) => this.eventOf(r));
  }

  async claim(
    tenant: string,
    eventId: string,
    now: number,
    leaseMs: number,
    force = false,
  ): Promise<boolean> {
    return this.claimTx(tenant, eventId, now, leaseMs, force);
  }

  async renewClaim(tenant: string, eventId: string, from: number, until: number): Promise<boolean> {
    return this.stmts.renewClaim.run({ tenant, eventId, from, until }).changes === 1;
  }

  async updateRun(
    tenant: string,
    eventId: string,
    trigger: string,
    status: EventRunStatus,
    refusal: RunRefusal | null,
    now: number,
  ): Promise<void> {
    this.stmts.updateRun.run({
      tenant,
      eventId,
      trigger,
      status,
      refusal: refusal ? JSON.stringify(refusal) : null,
      updatedAt: now,
    });
  }

  async finish(
    tenant: string,
    eventId: string,
    state: 'pending' | 'settled',
    attempts: number,
    nextAttemptAt: number,
  ): Promise<void> {
    this.stmts.finish.run({ tenant, eventId, state, attempts, nextAttemptAt });
  }

  async reopen(tenant: string, eventId: string, newRuns: NewEventRun[], now: number): Promise<void> {
    const tx = this.db.transaction(() => {
      for (const r of newRuns) this.stmts.insertRun.run(runParams(tenant, eventId, r, now));
      this.stmts.reopen.run({ tenant, eventId, now });
    });
    tx.immediate();
  }

  async due(now: number, limit: number): Promise<{ tenant: string; eventId: string }[]> {
    return this.stmts.due.all(now, now, limit).map((r) => ({ tenant: r.tenant, eventId: r.event_id }));
  }

  async secretFor(tenant: string, source: string): Promise<string | undefined> {
    return this.stmts.getSecret.get(tenant, source)?.secret;
  }

  async putSecret(tenant: string, source: string, secret: string, now: number): Promise<void> {
    this.stmts.putSecret.run(tenant, source, secret, now);
  }

  async deleteSecret(tenant: string, source: string): Promise<boolean> {
    return this.stmts.deleteSecret.run(tenant, source).changes === 1;
  }

  async listSecrets(tenant: string): Promise<{ source: string; createdAt: number }[]> {
    return this.stmts.listSecrets.all(tenant).map((r) => ({ source: r.source, createdAt: r.created_at }));
  }

  async getTrigger(
    tenant: string,
    name: string,
  ): Promise<{ spec: TriggerSpec; updatedAt: number } | undefined> {
    const row = this.stmts.getTrigger.get(tenant, name);
    if (!row) return undefined;
    const { spec, updatedAt } = toTrigger({ name, ...row });
    return { spec, updatedAt };
  }

  async putTrigger(tenant: string, name: string, spec: TriggerSpec, now: number): Promise<boolean> {
    const existed = this.stmts.getTrigger.get(tenant, name) !== undefined;
    this.stmts.putTrigger.run(tenant, name, triggerText(spec), now);
    return !existed;
  }

  async deleteTrigger(tenant: string, name: string): Promise<boolean> {
    return this.stmts.deleteTrigger.run(tenant, name).changes === 1;
  }

  async listTriggers(tenant: string): Promise<TriggerEntry[]> {
    return this.triggersOf(tenant);
  }

  async prune(now: number): Promise<number> {
    return this.pruneNow(now);
  }

  private pruneNow(now: number): number {
    const n = this.stmts.prune.run(now - EVENT_RETENTION_MS).changes;
    if (n > 0) this.stmts.pruneRuns.run();
    return n;
  }
}

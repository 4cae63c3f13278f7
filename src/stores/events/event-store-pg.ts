import type { Pool, PoolClient } from 'pg';
import type { TriggerSpec } from '../../contract/triggers';
import { inTransaction } from '../engine/pg';
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
  TriggerRow,
} from './event-store';
import { LazyPrune } from '../idempotency/idempotency';

type Queryable = Pool | PoolClient;

const INSERT_RUN = `INSERT INTO event_runs (tenant, event_id, trigger, run_id, agent, priority, input,
    estimated_tokens, fairness_key, status, refusal, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`;

async function insertRun(q: Queryable, tenant: string, eventId: string, r: NewEventRun, now: number) {
  const p = runParams(tenant, eventId, r, now);
  await q.query(INSERT_RUN, [
    p.tenant,
    p.eventId,
    p.trigger,
    p.runId,
    p.agent,
    p.priority,
    p.input,
    p.estimatedTokens,
    p.fairnessKey,
    p.status,
    p.refusal,
    p.updatedAt,
  ]);
}

async function eventOf(q: Queryable, row: EventRow): Promise<EventRecord> {
  const runs = await q.query<RunRow>(
    'SELECT * FROM event_runs WHERE tenant = $1 AND event_id = $2 ORDER BY trigger',
    [row.tenant, row.event_id],
  );
  return toEvent(row, runs.rows);
}

async function getEvent(q: Queryable, tenant: string, eventId: string): Promise<EventRow | undefined> {
  const r = await q.query<EventRow>('SELECT * FROM events WHERE tenant = $1 AND event_id = $2', [
    tenant,
    eventId,
  ]);
  return r.rows[0];
}

async function triggersOf(q: Queryable, tenant: string): Promise<TriggerEntry[]> {
  const r = await q.query<TriggerRow>(
    'SELECT name, spec, updated_at FROM triggers WHERE tenant = $1 ORDER BY name',
    [tenant],
  );
  return r.rows.map(toTrigger);
}

/** The event store in PostgreSQL: every API process on every host records and dispatches from it. */
export class PgEventStore implements EventStore {
  private readonly pruner = new LazyPrune((now) => this.prune(now));

  constructor(private readonly pool: Pool) {}

  record(ev: NewEvent, runsFor: (triggers: TriggerEntry[]) => NewEventRun[]): Promise<RecordResult> {
    this.pruner.maybe(ev.receivedAt);
    return inTransaction(this.pool, async (c) => {
      // Two API processes recording the same event id take turns (the row may not exist yet to lock).
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`event:${ev.tenant}:${ev.eventId}`]);
      const existing = await getEvent(c, ev.tenant, ev.eventId);
      if (existing && Number(existing.received_at) >= ev.receivedAt - EVENT_RETENTION_MS) {
        return { created: false, event: await eventOf(c, existing) };
      }
      await c.query('DELETE FROM event_runs WHERE tenant = $1 AND event_id = $2', [ev.tenant, ev.eventId]);
      const runs = runsFor(await triggersOf(c, ev.tenant));
      const settled = runs.every((r) => r.status !== 'pending');
      await c.query(
        `INSERT INTO events (tenant, event_id, body_hash, envelope, received_at, state, attempts,
           next_attempt_at, claimed_until, replays)
         VALUES ($1, $2, $3, $4, $5, $6, 0, $5, 0, 0)
         ON CONFLICT (tenant, event_id) DO UPDATE SET body_hash = EXCLUDED.body_hash,
           envelope = EXCLUDED.envelope, received_at = EXCLUDED.received_at, state = EXCLUDED.state,
           attempts = 0, next_attempt_at = EXCLUDED.next_attempt_at, claimed_until = 0, replays = 0`,
        [
          ev.tenant,
          ev.eventId,
          ev.bodyHash,
          JSON.stringify(ev.envelope),
          ev.receivedAt,
          settled ? 'settled' : 'pending',
        ],
      );
      for (const r of runs) await insertRun(c, ev.tenant, ev.eventId, r, ev.receivedAt);
      return { created: true, event: await eventOf(c, (await getEvent(c, ev.tenant, ev.eventId))!) };
    });
  }

  async get(tenant: string, eventId: string): Promise<EventRecord | undefined> {
    const row = await getEvent(this.pool, tenant, eventId);
    return row && eventOf(this.pool, row);
  }

  async findById(tenant: string, id: string, sep: string, limit: number): Promise<EventRecord[]> {
    // starts_with compares bytes, whatever the database's collation.
    const r = await this.pool.query<EventRow>(
      `SELECT * FROM events WHERE tenant = $1 AND (event_id = $2 OR starts_with(event_id, $3))
       ORDER BY received_at DESC LIMIT $4`,
      [tenant, id, `${id}${sep}`, limit],
    );
    return Promise.all(r.rows.map((row) => eventOf(this.pool, row)));
  }

  async list(tenant: string, before: number, limit: number): Promise<EventRecord[]> {
    const r = await this.pool.query<EventRow>(
      'SELECT * FROM events WHERE tenant = $1 AND received_at < $2 ORDER BY received_at DESC LIMIT $3',
      [tenant, before, limit],
    );
    return Promise.all(r.rows.map((row) => eventOf(this.pool, row)));
  }

  async claim(
    tenant: string,
    eventId: string,
    now: number,
    leaseMs: number,
    force = false,
  ): Promise<boolean> {
    // One statement: PostgreSQL re-checks the WHERE on the locked row, so two claimers cannot both win.
    const r = await this.pool.query(
      `UPDATE events SET claimed_until = $3 + $4::bigint
       WHERE tenant = $1 AND event_id = $2 AND state = 'pending' AND claimed_until <= $3
         AND (next_attempt_at <= $3 OR $5)`,
      [tenant, eventId, now, leaseMs, force],
    );
    return r.rowCount === 1;
  }

  async renewClaim(tenant: string, eventId: string, from: number, until: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE events SET claimed_until = $4
       WHERE tenant = $1 AND event_id = $2 AND state = 'pending' AND claimed_until = $3`,
      [tenant, eventId, from, until],
    );
    return r.rowCount === 1;
  }

  async updateRun(
    tenant: string,
    eventId: string,
    trigger: string,
    status: EventRunStatus,
    refusal: RunRefusal | null,
    now: number,
  ): Promise<void> {
    await this.pool.query(
      `UPDATE event_runs SET status = $4, refusal = $5, updated_at = $6
       WHERE tenant = $1 AND event_id = $2 AND trigger = $3`,
      [tenant, eventId, trigger, status, refusal ? JSON.stringify(refusal) : null, now],
    );
  }

  async finish(
    tenant: string,
    eventId: string,
    state: 'pending' | 'settled',
    attempts: number,
    nextAttemptAt: number,
  ): Promise<void> {
    await this.pool.query(
      `UPDATE events SET state = $3, attempts = $4, next_attempt_at = $5, claimed_until = 0
       WHERE tenant = $1 AND event_id = $2`,
      [tenant, eventId, state, attempts, nextAttemptAt],
    );
  }

  reopen(tenant: string, eventId: string, newRuns: NewEventRun[], now: number): Promise<void> {
    return inTransaction(this.pool, async (c) => {
      for (const r of newRuns) await insertRun(c, tenant, eventId, r, now);
      await c.query(
        `UPDATE events SET state = 'pending', attempts = 0, next_attempt_at = $3, replays = replays + 1
         WHERE tenant = $1 AND event_id = $2`,
        [tenant, eventId, now],
      );
    });
  }

  async due(now: number, limit: number): Promise<{ tenant: string; eventId: string }[]> {
    const r = await this.pool.query<{ tenant: string; event_id: string }>(
      `SELECT tenant, event_id FROM events
       WHERE state = 'pending' AND next_attempt_at <= $1 AND claimed_until <= $1
       ORDER BY next_attempt_at LIMIT $2`,
      [now, limit],
    );
    return r.rows.map((row) => ({ tenant: row.tenant, eventId: row.event_id }));
  }

  async secretFor(tenant: string, source: string): Promise<string | undefined> {
    const r = await this.pool.query<{ secret: string }>(
      'SELECT secret FROM webhook_secrets WHERE tenant = $1 AND source = $2',
      [tenant, source],
    );
    return r.rows[0]?.secret;
  }

  async putSecret(tenant: string, source: string, secret: string, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO webhook_secrets (tenant, source, secret, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant, source) DO UPDATE SET secret = EXCLUDED.secret, created_at = EXCLUDED.created_at`,
      [tenant, source, secret, now],
    );
  }

  async deleteSecret(tenant: string, source: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM webhook_secrets WHERE tenant = $1 AND source = $2', [
      tenant,
      source,
    ]);
    return r.rowCount === 1;
  }

  async listSecrets(tenant: string): Promise<{ source: string; createdAt: number }[]> {
    const r = await this.pool.query<{ source: string; created_at: string }>(
      'SELECT source, created_at FROM webhook_secrets WHERE tenant = $1 ORDER BY source',
      [tenant],
    );
    return r.rows.map((row) => ({ source: row.source, createdAt: Number(row.created_at) }));
  }

  async getTrigger(
    tenant: string,
    name: string,
  ): Promise<{ spec: TriggerSpec; updatedAt: number } | undefined> {
    const r = await this.pool.query<TriggerRow>(
      'SELECT name, spec, updated_at FROM triggers WHERE tenant = $1 AND name = $2',
      [tenant, name],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const { spec, updatedAt } = toTrigger(row);
    return { spec, updatedAt };
  }

  async putTrigger(tenant: string, name: string, spec: TriggerSpec, now: number): Promise<boolean> {
    // xmax = 0 only on a freshly inserted row: tells a creation from a replacement in one statement.
    const r = await this.pool.query<{ created: boolean }>(
      `INSERT INTO triggers (tenant, name, spec, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant, name) DO UPDATE SET spec = EXCLUDED.spec, updated_at = EXCLUDED.updated_at
       RETURNING (xmax = 0) AS created`,
      [tenant, name, triggerText(spec), now],
    );
    return r.rows[0]?.created === true;
  }

  async deleteTrigger(tenant: string, name: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM triggers WHERE tenant = $1 AND name = $2', [tenant, name]);
    return r.rowCount === 1;
  }

  listTriggers(tenant: string): Promise<TriggerEntry[]> {
    return triggersOf(this.pool, tenant);
  }

  prune(now: number): Promise<number> {
    return inTransaction(this.pool, async (c) => {
      const r = await c.query(`DELETE FROM events WHERE state = 'settled' AND received_at < $1`, [
        now - EVENT_RETENTION_MS,
      ]);
      const n = r.rowCount ?? 0;
      if (n > 0) {
        await c.query(
          `DELETE FROM event_runs WHERE NOT EXISTS
             (SELECT 1 FROM events e WHERE e.tenant = event_runs.tenant AND e.event_id = event_runs.event_id)`,
        );
      }
      return n;
    });
  }
}

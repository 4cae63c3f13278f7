import type { EventEnvelope, TriggerSpec } from '../../contract/triggers';
import type { Refusal } from '../../scheduler/types';

/**
 * Events, their runs, triggers and webhook secrets, in the API's store (SQLite or PostgreSQL).
 *
 * Webhook secrets are stored as they are: verifying an HMAC needs the secret itself (a hash cannot
 * verify one), and encrypting them with a key kept next to this file would add nothing; protect the
 * file (and its disk) as you protect the API keys' store. They are never returned after creation.
 */
export const EVENT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

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
    fairness_key     TEXT,
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
  /** The run's fairness key (the trigger's, or the event's value it names); absent: the tenant's default. */
  fairnessKey?: string;
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

/** Rows as either engine returns them (PostgreSQL's BIGINT arrives as a string). */
export interface EventRow {
  tenant: string;
  event_id: string;
  body_hash: string;
  envelope: string;
  received_at: number | string;
  state: 'pending' | 'settled';
  attempts: number;
  next_attempt_at: number | string;
  claimed_until: number | string;
  replays: number;
}

export interface RunRow {
  trigger: string;
  run_id: string;
  agent: string;
  priority: TriggerSpec['priority'];
  input: string;
  estimated_tokens: number | string;
  fairness_key: string | null;
  status: EventRunStatus;
  refusal: string | null;
  updated_at: number | string;
}

export const toRun = (r: RunRow): EventRunRecord => ({
  trigger: r.trigger,
  runId: r.run_id,
  agent: r.agent,
  priority: r.priority,
  input: JSON.parse(r.input) as unknown,
  estimatedTokens: Number(r.estimated_tokens),
  ...(r.fairness_key ? { fairnessKey: r.fairness_key } : {}),
  status: r.status,
  refusal: r.refusal ? (JSON.parse(r.refusal) as RunRefusal) : null,
  updatedAt: Number(r.updated_at),
});

/** A trigger row as either engine returns it (PostgreSQL's BIGINT arrives as a string). */
export interface TriggerRow {
  name: string;
  spec: string;
  updated_at: number | string;
}

export const toTrigger = (r: TriggerRow): TriggerEntry => ({
  name: r.name,
  spec: specOf(JSON.parse(r.spec) as StoredSpec),
  updatedAt: Number(r.updated_at),
});

/** A trigger as stored: its `input` kept as JSON text (`inputJson`), so matching never builds it. */
type StoredSpec = TriggerSpec & { inputJson?: string };

/** The stored text of a trigger (see StoredSpec). */
export function triggerText(spec: TriggerSpec): string {
  const { input, ...rest } = spec;
  return JSON.stringify(input === undefined ? rest : { ...rest, inputJson: JSON.stringify(input) });
}

/** The spec, its input parsed on first read only (an event reads it when the trigger matches). */
function specOf(stored: StoredSpec): TriggerSpec {
  const { inputJson, ...spec } = stored;
  if (inputJson === undefined) return spec;
  let input: unknown;
  let parsed = false;
  return Object.defineProperty(spec, 'input', {
    enumerable: true,
    get: () => {
      if (!parsed) {
        input = JSON.parse(inputJson) as unknown;
        parsed = true;
      }
      return input;
    },
  });
}

export function toEvent(row: EventRow, runs: RunRow[]): EventRecord {
  return {
    tenant: row.tenant,
    eventId: row.event_id,
    bodyHash: row.body_hash,
    envelope: JSON.parse(row.envelope) as EventEnvelope,
    receivedAt: Number(row.received_at),
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    replays: Number(row.replays),
    runs: runs.map(toRun),
  };
}

/** The parameters of one event_runs row. */
export function runParams(tenant: string, eventId: string, r: NewEventRun, now: number) {
  return {
    tenant,
    eventId,
    trigger: r.trigger,
    runId: r.runId,
    agent: r.agent,
    priority: r.priority,
    input: JSON.stringify(r.input ?? null),
    estimatedTokens: r.estimatedTokens,
    fairnessKey: r.fairnessKey ?? null,
    status: r.status,
    refusal: r.refusal ? JSON.stringify(r.refusal) : null,
    updatedAt: now,
  };
}

export type RecordResult = { created: true; event: EventRecord } | { created: false; event: EventRecord };

export interface TriggerEntry {
  name: string;
  spec: TriggerSpec;
  updatedAt: number;
}

export interface NewEvent {
  tenant: string;
  eventId: string;
  bodyHash: string;
  envelope: EventEnvelope;
  receivedAt: number;
}

/** Events, their runs, triggers and webhook secrets; both engines implement it. */
export interface EventStore {
  /**
   * Records a new event and the runs `runsFor` makes of the tenant's triggers (read inside the same
   * transaction), or returns the event already recorded under this id within the retention window.
   * Durable once it resolves.
   */
  record(ev: NewEvent, runsFor: (triggers: TriggerEntry[]) => NewEventRun[]): Promise<RecordResult>;
  get(tenant: string, eventId: string): Promise<EventRecord | undefined>;
  /**
   * The events whose key is `id` or starts with `id` + `keySeparator` (one per source that sent this id),
   * newest first, at most `limit`.
   */
  findById(tenant: string, id: string, keySeparator: string, limit: number): Promise<EventRecord[]>;
  /** The tenant's events received before `before` (ms), newest first. */
  list(tenant: string, before: number, limit: number): Promise<EventRecord[]>;
  /** Takes the event for dispatch for `leaseMs` (false when settled, not yet due, or taken by another). */
  claim(tenant: string, eventId: string, now: number, leaseMs: number, force?: boolean): Promise<boolean>;
  /**
   * Extends a claim its holder still holds (`claimed_until` is still `from`, the end it set) to
   * `until`; false when it lapsed and another took the event, or the event was finished.
   */
  renewClaim(tenant: string, eventId: string, from: number, until: number): Promise<boolean>;
  updateRun(
    tenant: string,
    eventId: string,
    trigger: string,
    status: EventRunStatus,
    refusal: RunRefusal | null,
    now: number,
  ): Promise<void>;
  /** Ends a dispatch: settled, or pending again from `nextAttemptAt`; releases the claim. */
  finish(
    tenant: string,
    eventId: string,
    state: 'pending' | 'settled',
    attempts: number,
    nextAttemptAt: number,
  ): Promise<void>;
  /** A replay: adds runs for triggers that match now and did not before, and makes the event due again. */
  reopen(tenant: string, eventId: string, newRuns: NewEventRun[], now: number): Promise<void>;
  /** Events due for dispatch at `now` (pending, not claimed), oldest first. */
  due(now: number, limit: number): Promise<{ tenant: string; eventId: string }[]>;
  secretFor(tenant: string, source: string): Promise<string | undefined>;
  putSecret(tenant: string, source: string, secret: string, now: number): Promise<void>;
  deleteSecret(tenant: string, source: string): Promise<boolean>;
  listSecrets(tenant: string): Promise<{ source: string; createdAt: number }[]>;
  getTrigger(tenant: string, name: string): Promise<{ spec: TriggerSpec; updatedAt: number } | undefined>;
  /** Creates or replaces a trigger; true when it was created. */
  putTrigger(tenant: string, name: string, spec: TriggerSpec, now: number): Promise<boolean>;
  deleteTrigger(tenant: string, name: string): Promise<boolean>;
  listTriggers(tenant: string): Promise<TriggerEntry[]>;
  /** Deletes settled events (and their runs) older than the retention; returns how many events. */
  prune(now: number): Promise<number>;
}

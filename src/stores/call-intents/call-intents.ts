/**
 * A model call a worker is about to make, written durably before the call goes, so that its charge
 * outlives the worker: the worker's mailbox carries the charge, and a worker that dies before that
 * charge reached the scheduler leaves the row for another worker's sweep to charge.
 */
export interface CallIntent {
  /** Unique per call made: its call key (`<runId>/<attempt>/<step>/`) and a random suffix. */
  key: string;
  tenant: string;
  runId: string;
  attempt: number;
  /** The most the provider can bill this call: charged when the call's outcome is unknown. */
  reserved: number;
  /** The worker process that makes the call and owes its charge. */
  owner: string;
}

/** A row taken over from a dead owner: charge `tokens` when the bill was recorded, else `reserved`. */
export interface OrphanedCall {
  key: string;
  tenant: string;
  runId: string;
  attempt: number;
  reserved: number;
  /** The provider's bill for the call, or null when the owner died before it recorded one. */
  tokens: number | null;
  /**
   * Its charge reached the scheduler already (the row is taken only to reconcile its provisional
   * charge): nothing is charged for it.
   */
  settled: boolean;
}

/** A call recorded earlier under one call key (run, attempt, step): what it is known to have cost. */
export interface RecordedCall {
  key: string;
  reserved: number;
  /** The provider's bill for it, or null while its outcome is unknown (in flight, cut, or its worker died). */
  tokens: number | null;
}

/** A call charged its reservation as its outcome was unknown, whose charge reached the scheduler. */
export interface ProvisionalCall {
  key: string;
  tenant: string;
  runId: string;
  attempt: number;
  /** What it was charged: its reservation. */
  reserved: number;
}

/**
 * The durable record of model calls and whether their charge reached the scheduler. Two
 * implementations: a SQLite file (one host) and PostgreSQL (`DATABASE_URL`, any number of hosts).
 */
export interface CallIntentStore {
  /** Records a call before it is made (the call must not go unless this resolved). */
  begin(intent: CallIntent, now: number): Promise<void>;
  /** Records what the provider billed the call. */
  billed(key: string, tokens: number): Promise<void>;
  /**
   * The calls still recorded of run `runId`'s `attempt` whose key begins with `keyPrefix` (one call
   * key: see `CallCharges.begin`), oldest first. A call the provider refused is not among them.
   */
  callsOf(runId: string, attempt: number, keyPrefix: string): Promise<RecordedCall[]>;
  /** Forgets a call the provider refused (a 429, a 4xx, a 5xx): it billed nothing. */
  drop(key: string): Promise<void>;
  /** Marks calls whose charge the scheduler has in its history (never charged by a sweep again). */
  settle(keys: readonly string[], now: number): Promise<void>;
  /** Marks a call charged its reservation because its outcome is unknown: its charge is provisional. */
  provisional(key: string): Promise<void>;
  /**
   * Up to `limit` calls of `owner` whose provisional charge reached the scheduler, made before
   * `madeBefore`, and not yet reconciled with the provider's report; oldest first.
   */
  dueForReconcile(owner: string, madeBefore: number, limit: number): Promise<ProvisionalCall[]>;
  /** Marks calls whose correction the scheduler has in its history (never corrected again). */
  reconciled(keys: readonly string[], now: number): Promise<void>;
  /** Says `owner` is alive at `now` (its rows are not taken while it is seen). */
  beat(owner: string, now: number): Promise<void>;
  /**
   * Takes, for `owner`, up to `limit` rows of owners not seen since `deadBefore` that they still owe
   * something for: unsettled (a charge; one without a bill is marked provisional) or provisional and
   * not reconciled (a correction). Exclusive: a row is taken by one sweeper only (it belongs to the
   * taker from then on).
   */
  claimOrphans(owner: string, deadBefore: number, limit: number): Promise<OrphanedCall[]>;
  /**
   * Deletes rows settled before `settledBefore` (provisional ones only once reconciled, unless
   * `keepProvisional` is false: nothing will reconcile them), and owners not seen since `deadBefore`
   * that owe nothing.
   */
  prune(settledBefore: number, deadBefore: number, keepProvisional?: boolean): Promise<void>;
  /** Rows in the table and of them those not settled (tests and operators). */
  counts(): Promise<{ rows: number; unsettled: number }>;
  close(): Promise<void>;
}

/** The schema, the same for both engines. */
export const CALL_INTENTS_DDL = `
  CREATE TABLE IF NOT EXISTS call_intents (
    key        TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    attempt    INTEGER NOT NULL,
    reserved   BIGINT NOT NULL,
    tokens     BIGINT,
    owner      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    settled_at BIGINT
  );
  CREATE INDEX IF NOT EXISTS call_intents_unsettled ON call_intents (owner) WHERE settled_at IS NULL;
  CREATE INDEX IF NOT EXISTS call_intents_settled ON call_intents (settled_at) WHERE settled_at IS NOT NULL;
  CREATE TABLE IF NOT EXISTS call_owners (
    owner   TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
  );
`;

/**
 * Provisional charges (version 2 of the schema): `provisional` 1 for a call charged its reservation
 * as its outcome was unknown, `reconciled_at` once its correction reached the scheduler.
 */
export const PROVISIONAL_COLUMNS = [
  'ALTER TABLE call_intents ADD COLUMN provisional INTEGER NOT NULL DEFAULT 0',
  'ALTER TABLE call_intents ADD COLUMN reconciled_at BIGINT',
];
export const PROVISIONAL_INDEX =
  'CREATE INDEX IF NOT EXISTS call_intents_provisional ON call_intents (owner, created_at) WHERE provisional = 1 AND reconciled_at IS NULL';

/** Finds the calls of one run's attempt (version 3 of the schema). */
export const RUN_INDEX = 'CREATE INDEX IF NOT EXISTS call_intents_run ON call_intents (run_id, attempt)';

/** The statements both engines share, with `?` placeholders. */
export const CALL_SQL = {
  begin:
    'INSERT INTO call_intents (key, tenant, run_id, attempt, reserved, owner, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  billed: 'UPDATE call_intents SET tokens = ? WHERE key = ?',
  callsOf: `SELECT key, reserved, tokens FROM call_intents
    WHERE run_id = ? AND attempt = ? AND substr(key, 1, ?) = ? ORDER BY created_at`,
  drop: 'DELETE FROM call_intents WHERE key = ? AND settled_at IS NULL',
  beat: 'INSERT INTO call_owners (owner, seen_at) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET seen_at = excluded.seen_at',
  provisional: 'UPDATE call_intents SET provisional = 1 WHERE key = ?',
  dueForReconcile: `SELECT key, tenant, run_id, attempt, reserved FROM call_intents
    WHERE owner = ? AND provisional = 1 AND reconciled_at IS NULL AND settled_at IS NOT NULL AND created_at < ?
    ORDER BY created_at LIMIT ?`,
  pruneSettled: `DELETE FROM call_intents WHERE settled_at IS NOT NULL AND settled_at < ?
    AND (provisional = 0 OR reconciled_at IS NOT NULL OR ? = 0)`,
  pruneOwners: `DELETE FROM call_owners WHERE seen_at < ? AND owner NOT IN
    (SELECT owner FROM call_intents WHERE settled_at IS NULL OR (provisional = 1 AND reconciled_at IS NULL))`,
  rows: 'SELECT count(*) AS n FROM call_intents',
  unsettled: 'SELECT count(*) AS n FROM call_intents WHERE settled_at IS NULL',
};

/**
 * Takes the rows a sweep may take (unsettled, of an owner other than the taker and not seen lately)
 * for the taker, oldest first, in one statement; `lock` is what the engine adds to the inner select
 * (PostgreSQL: `FOR UPDATE SKIP LOCKED`). Parameters: taker, taker, seen since, limit.
 */
export const claimOrphansSql = (lock: string): string =>
  `UPDATE call_intents SET owner = ?,
     provisional = CASE WHEN settled_at IS NULL AND tokens IS NULL THEN 1 ELSE provisional END
   WHERE key IN (
     SELECT key FROM call_intents
     WHERE (settled_at IS NULL OR (provisional = 1 AND reconciled_at IS NULL))
       AND owner <> ? AND owner NOT IN (SELECT owner FROM call_owners WHERE seen_at >= ?)
     ORDER BY created_at LIMIT ? ${lock}
   ) RETURNING key, tenant, run_id, attempt, reserved, tokens, settled_at`;

export interface OrphanRow {
  key: string;
  tenant: string;
  run_id: string;
  attempt: number | string;
  reserved: number | string;
  tokens: number | string | null;
  settled_at?: number | string | null;
}

export const toOrphan = (r: OrphanRow): OrphanedCall => ({
  key: r.key,
  tenant: r.tenant,
  runId: r.run_id,
  attempt: Number(r.attempt),
  reserved: Number(r.reserved),
  tokens: r.tokens === null ? null : Number(r.tokens),
  settled: r.settled_at !== null && r.settled_at !== undefined,
});

export const toRecorded = (r: Pick<OrphanRow, 'key' | 'reserved' | 'tokens'>): RecordedCall => ({
  key: r.key,
  reserved: Number(r.reserved),
  tokens: r.tokens === null ? null : Number(r.tokens),
});

export const toProvisional = (r: OrphanRow): ProvisionalCall => ({
  key: r.key,
  tenant: r.tenant,
  runId: r.run_id,
  attempt: Number(r.attempt),
  reserved: Number(r.reserved),
});

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
  /** The owner that made the call (null for rows from before schema version 4). */
  madeBy: string | null;
  /**
   * Its charge is provisional (the row was taken before its bill was recorded): charged at its
   * worst case, which its taker's reconciler settles to the bill, even when a late bill has been
   * recorded since.
   */
  provisional: boolean;
}

/** What one sweep took: the owners it fenced, and all the rows they still owed for. */
export interface TakenOver {
  owners: string[];
  calls: OrphanedCall[];
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
  /** The owner that made the call (another than the row's owner once a sweep took it over). */
  madeBy?: string;
  /** When the call was recorded (ms since epoch). */
  madeAt?: number;
}

/**
 * The durable record of model calls and whether their charge reached the scheduler. Two
 * implementations: a SQLite file (one host) and PostgreSQL (`DATABASE_URL`, any number of hosts).
 */
export interface CallIntentStore {
  /**
   * Records a call before it is made (the call must not go unless this resolved true). False when
   * `intent.owner` is fenced or unknown: nothing is recorded, and the owner must go on under a new id.
   */
  begin(intent: CallIntent, now: number): Promise<boolean>;
  /** Records what the provider billed the call; false when the row is no longer `owner`'s (taken over). */
  billed(key: string, owner: string, tokens: number): Promise<boolean>;
  /**
   * Records `tokens` as the call's bill unless one is recorded already, and answers the bill the row
   * holds then; undefined when there is no row `key` owned by `by.owner` (or made by `by.madeBy`).
   * The first of a reconciler's lookup and a stalled maker's late bill decides; the other reads it.
   */
  billOnce(
    key: string,
    by: { owner: string } | { madeBy: string },
    tokens: number,
  ): Promise<number | undefined>;
  /**
   * The calls still recorded of run `runId`'s `attempt` whose key begins with `keyPrefix` (one call
   * key: see `CallCharges.begin`), oldest first. A call the provider refused is not among them.
   */
  callsOf(runId: string, attempt: number, keyPrefix: string): Promise<RecordedCall[]>;
  /** Forgets `owner`'s call the provider refused (a 429, a 4xx, a 5xx): it billed nothing. */
  drop(key: string, owner: string): Promise<void>;
  /**
   * Marks `owner`'s calls whose charge the scheduler has in its history (never charged by a sweep
   * again); answers the keys that are `owner`'s (a row taken over is its taker's to settle).
   */
  settle(keys: readonly string[], owner: string, now: number): Promise<string[]>;
  /** Marks a call charged its reservation as its outcome is unknown; false when not `owner`'s. */
  provisional(key: string, owner: string): Promise<boolean>;
  /**
   * Up to `limit` calls of `owner` whose provisional charge reached the scheduler, made before
   * `madeBefore`, and not yet reconciled with the provider's report; oldest first.
   */
  dueForReconcile(owner: string, madeBefore: number, limit: number): Promise<ProvisionalCall[]>;
  /** Marks `owner`'s calls whose correction the scheduler has in its history; answers those keys. */
  reconciled(keys: readonly string[], owner: string, now: number): Promise<string[]>;
  /** Adds `owner`, a new id, seen at `now`. */
  join(owner: string, now: number): Promise<void>;
  /**
   * Says `owner` is alive at `now` (its rows are not taken while it is seen). False when it is
   * fenced or unknown: it must go on under a new id.
   */
  beat(owner: string, now: number): Promise<boolean>;
  /**
   * Fences up to `maxOwners` owners not seen since `deadBefore` that still owe something, each in
   * one transaction with taking all its rows that owe for `taker`: unsettled (a charge; one without
   * a bill is marked provisional) or provisional and not reconciled (a correction). Exclusive: a row
   * is taken by one sweeper only, and a fenced owner records no call again (`begin`). Throws when
   * `taker` is itself fenced.
   */
  claimOrphans(taker: string, deadBefore: number, now: number, maxOwners: number): Promise<TakenOver>;
  /**
   * Deletes rows settled before `settledBefore` (provisional ones only once reconciled, unless
   * `keepProvisional` is false: nothing will reconcile them), and owners not seen since `deadBefore`
   * that owe nothing (one that comes back is unknown, so it goes on under a new id).
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

/**
 * Fencing (version 4 of the schema): `fenced_at` once a sweep took an owner's rows over (it records
 * no call again), `made_by` the owner that made a call (whoever owns its row now).
 */
export const FENCE_COLUMNS = [
  'ALTER TABLE call_owners ADD COLUMN fenced_at BIGINT',
  'ALTER TABLE call_intents ADD COLUMN made_by TEXT',
];

/** What a row still owes: its charge, or the correction of its provisional charge. */
const OWES = '(settled_at IS NULL OR (provisional = 1 AND reconciled_at IS NULL))';

/** Who `billOnce` is asked by, and the statements (of CALL_SQL) that record and read the bill for them. */
export function billOnceBy(by: { owner: string } | { madeBy: string }): {
  who: string;
  record: 'billOnceByOwner' | 'billOnceByMaker';
  read: 'billOfOwner' | 'billOfMaker';
} {
  return 'owner' in by
    ? { who: by.owner, record: 'billOnceByOwner', read: 'billOfOwner' }
    : { who: by.madeBy, record: 'billOnceByMaker', read: 'billOfMaker' };
}

/** The statements both engines share, with `?` placeholders. */
export const CALL_SQL = {
  billed: 'UPDATE call_intents SET tokens = ? WHERE key = ? AND owner = ?',
  /** Parameters: tokens, key, owner. */
  billOnceByOwner: 'UPDATE call_intents SET tokens = ? WHERE key = ? AND owner = ? AND tokens IS NULL',
  /** Parameters: tokens, key, maker. */
  billOnceByMaker: 'UPDATE call_intents SET tokens = ? WHERE key = ? AND made_by = ? AND tokens IS NULL',
  billOfOwner: 'SELECT tokens FROM call_intents WHERE key = ? AND owner = ?',
  billOfMaker: 'SELECT tokens FROM call_intents WHERE key = ? AND made_by = ?',
  callsOf: `SELECT key, reserved, tokens FROM call_intents
    WHERE run_id = ? AND attempt = ? AND substr(key, 1, ?) = ? ORDER BY created_at`,
  drop: 'DELETE FROM call_intents WHERE key = ? AND owner = ? AND settled_at IS NULL',
  join: 'INSERT INTO call_owners (owner, seen_at) VALUES (?, ?) ON CONFLICT (owner) DO NOTHING',
  beat: 'UPDATE call_owners SET seen_at = ? WHERE owner = ? AND fenced_at IS NULL',
  provisional: 'UPDATE call_intents SET provisional = 1 WHERE key = ? AND owner = ?',
  dueForReconcile: `SELECT key, tenant, run_id, attempt, reserved, made_by, created_at FROM call_intents
    WHERE owner = ? AND provisional = 1 AND reconciled_at IS NULL AND settled_at IS NOT NULL AND created_at < ?
    ORDER BY created_at LIMIT ?`,
  /** Parameters: taker, seen since, limit. */
  deadOwners: `SELECT DISTINCT owner FROM call_intents WHERE ${OWES} AND owner <> ?
    AND owner NOT IN (SELECT owner FROM call_owners WHERE seen_at >= ? AND fenced_at IS NULL) LIMIT ?`,
  /** An owner, fenced now unless it was seen since (parameters: owner, now, seen since): answers it when fenced. */
  fence: `INSERT INTO call_owners (owner, seen_at, fenced_at) VALUES (?, 0, ?)
    ON CONFLICT (owner) DO UPDATE SET fenced_at = COALESCE(call_owners.fenced_at, excluded.fenced_at)
    WHERE call_owners.seen_at < ? OR call_owners.fenced_at IS NOT NULL RETURNING owner`,
  /** Takes all the rows one owner owes for (parameters: taker, owner). */
  takeOver: `UPDATE call_intents SET owner = ?,
      provisional = CASE WHEN settled_at IS NULL AND tokens IS NULL THEN 1 ELSE provisional END
    WHERE owner = ? AND ${OWES}
    RETURNING key, tenant, run_id, attempt, reserved, tokens, settled_at, made_by, provisional`,
  pruneSettled: `DELETE FROM call_intents WHERE settled_at IS NOT NULL AND settled_at < ?
    AND (provisional = 0 OR reconciled_at IS NOT NULL OR ? = 0)`,
  pruneOwners: `DELETE FROM call_owners WHERE seen_at < ? AND owner NOT IN
    (SELECT owner FROM call_intents WHERE ${OWES})`,
  rows: 'SELECT count(*) AS n FROM call_intents',
  unsettled: 'SELECT count(*) AS n FROM call_intents WHERE settled_at IS NULL',
};

/**
 * Records a call if its owner is known and not fenced; `lock` is what the engine adds so that a
 * fence cannot pass it (PostgreSQL: `FOR SHARE`). Parameters: key, tenant, run id, attempt,
 * reserved, now, owner.
 */
export const beginSql = (lock: string): string =>
  `INSERT INTO call_intents (key, tenant, run_id, attempt, reserved, owner, made_by, created_at)
   SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS BIGINT),
     owner, owner, CAST(? AS BIGINT)
   FROM call_owners WHERE owner = ? AND fenced_at IS NULL ${lock}`;

/**
 * The taker, if it is not fenced (parameter: taker); `lock` as in {@link beginSql}: a sweeper that
 * is being fenced takes nothing.
 */
export const takerSql = (lock: string): string =>
  `SELECT owner FROM call_owners WHERE owner = ? AND fenced_at IS NULL ${lock}`;

/** Takes over each dead owner in turn (`take`: one transaction, null when it is not dead after all). */
export async function takeOverEach(
  dead: readonly string[],
  take: (owner: string) => Promise<OrphanedCall[] | null>,
): Promise<TakenOver> {
  const taken: TakenOver = { owners: [], calls: [] };
  for (const owner of dead) {
    const calls = await take(owner);
    if (!calls?.length) continue;
    taken.owners.push(owner);
    taken.calls.push(...calls);
  }
  return taken;
}

/** A sweep found `taker` fenced: it must go on under a new id before it takes anything. */
export class TakerFenced extends Error {
  constructor(taker: string) {
    super(`call charges owner ${taker} is fenced`);
  }
}

export interface OrphanRow {
  key: string;
  tenant: string;
  run_id: string;
  attempt: number | string;
  reserved: number | string;
  tokens: number | string | null;
  settled_at?: number | string | null;
  made_by?: string | null;
  created_at?: number | string | null;
  provisional?: number | string | boolean | null;
}

export const toOrphan = (r: OrphanRow): OrphanedCall => ({
  key: r.key,
  tenant: r.tenant,
  runId: r.run_id,
  attempt: Number(r.attempt),
  reserved: Number(r.reserved),
  tokens: r.tokens === null ? null : Number(r.tokens),
  settled: r.settled_at !== null && r.settled_at !== undefined,
  madeBy: r.made_by ?? null,
  provisional: Number(r.provisional ?? 0) === 1,
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
  ...(r.made_by ? { madeBy: r.made_by } : {}),
  ...(r.created_at !== undefined && r.created_at !== null ? { madeAt: Number(r.created_at) } : {}),
});

import type { BudgetExhaustedMode } from '../../contract/fleet-port';
import type { Priority } from '../../scheduler/types';

/**
 * A batch sent in parts (`POST /v1/batches/open`, `…/items`, `…/commit`): its items wait here, never
 * in a Temporal payload. The API writes them; each batch chunk's activity reads its items by index.
 * Both open it at the same location (`DATABASE_URL`, or a SQLite file in `DATA_DIR` shared by the
 * processes of one host), as they do the effect store.
 */
export interface StoredBatch {
  batchId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  /** The client's `estimatedTokensPerItem` (a floor), or 0. */
  tokensFloor: number;
  onBudgetExhausted: BudgetExhaustedMode;
  /** Ms since the epoch. */
  createdAt: number;
  /** `open`: parts may be appended; `committed`: frozen (and started once `started`). */
  state: 'open' | 'committed';
  items: number;
  parts: number;
  /** The sum of the agent's estimates of every item (the batch reserves at least their mean each). */
  estimateSum: number;
  /** The batch's workflow was started. */
  started: boolean;
  /** The fairness key of its runs that no part names one for (`POST /v1/batches/open`); absent: none. */
  fairnessKey?: string;
}

export type NewStoredBatch = Omit<StoredBatch, 'state' | 'items' | 'parts' | 'estimateSum' | 'started'>;

export interface BatchPart {
  /** The part's sequence number: 0, 1, 2, … in order; the key a retried part is recognised by. */
  part: number;
  /** A hash of the part's items: the same number with other items is a conflict, never a second append. */
  hash: string;
  items: unknown[];
  /** Each item's own fairness key, aligned with `items` (null: the batch's); absent when none names one. */
  fairnessKeys?: (string | null)[];
  estimateSum: number;
}

export type AppendOutcome =
  | { kind: 'appended' | 'replayed'; firstIndex: number; count: number; total: number }
  | { kind: 'missing' }
  | { kind: 'conflict' }
  | { kind: 'committed' }
  | { kind: 'out_of_order'; expected: number }
  | { kind: 'too_many'; total: number; limit: number };

export interface BatchItemStore {
  create(batch: NewStoredBatch): Promise<void>;
  get(batchId: string): Promise<StoredBatch | null>;
  /** The tenant's batches still open that were created at or after `since`. */
  countOpen(tenant: string, since: number): Promise<number>;
  /** Appends a part exactly once (a retried part is `replayed`), unless the batch would pass `maxItems`. */
  append(batchId: string, part: BatchPart, maxItems: number): Promise<AppendOutcome>;
  /** Freezes an open batch (idempotent); null when there is no such batch. */
  commit(batchId: string): Promise<StoredBatch | null>;
  /** A committed batch whose start was refused goes back to open (only while not started). */
  reopen(batchId: string): Promise<void>;
  markStarted(batchId: string): Promise<void>;
  /** Committed batches not yet started, committed before `before` (their committer may have died). */
  unstarted(before: number): Promise<StoredBatch[]>;
  /**
   * Every item's own fairness key in index order (null: the batch's key), or null when no part named
   * one (or the items were dropped). Read once, when the committed batch's workflow is started.
   */
  readKeys(batchId: string): Promise<(string | null)[] | null>;
  /** The items at `indexes`, in that order; throws when one is missing (never made up). */
  readItems(batchId: string, indexes: number[]): Promise<unknown[]>;
  /** Forgets the items of a started batch whose runs all exist (the parts' hashes stay, for replays). */
  dropItems(batchId: string): Promise<void>;
  /** Deletes open batches created before `before`, with their parts; returns how many. */
  purgeOpen(before: number): Promise<number>;
  close(): Promise<void>;
}

/** A batch row as both engines return it (PostgreSQL gives BIGINTs as strings). */
export interface BatchRow {
  batch_id: string;
  tenant: string;
  agent: string;
  priority: string;
  tokens_floor: number | string;
  on_budget_exhausted: string;
  created_at: number | string;
  state: string;
  items: number;
  parts: number;
  estimate_sum: number | string;
  started: number;
  fairness_key: string | null;
}

export const toStoredBatch = (r: BatchRow): StoredBatch => ({
  batchId: r.batch_id,
  tenant: r.tenant,
  agent: r.agent,
  priority: r.priority as Priority,
  tokensFloor: Number(r.tokens_floor),
  onBudgetExhausted: r.on_budget_exhausted as BudgetExhaustedMode,
  createdAt: Number(r.created_at),
  state: r.state === 'committed' ? 'committed' : 'open',
  items: r.items,
  parts: r.parts,
  estimateSum: Number(r.estimate_sum),
  started: r.started === 1,
  ...(r.fairness_key !== null ? { fairnessKey: r.fairness_key } : {}),
});

/**
 * The one decision of an append, for both engines (inside their transaction): `null` means append.
 * A part seen before is answered from its record whatever the batch's state (a retry after commit
 * still learns where its items went); a new part must be the next in sequence.
 */
export function decideAppend(
  batch: StoredBatch | null,
  seen: { hash: string; firstIndex: number; count: number } | null,
  part: BatchPart,
  maxItems: number,
): AppendOutcome | null {
  if (!batch) return { kind: 'missing' };
  if (seen) {
    return seen.hash === part.hash
      ? { kind: 'replayed', firstIndex: seen.firstIndex, count: seen.count, total: batch.items }
      : { kind: 'conflict' };
  }
  if (batch.state !== 'open') return { kind: 'committed' };
  if (part.part !== batch.parts) return { kind: 'out_of_order', expected: batch.parts };
  if (batch.items + part.items.length > maxItems) {
    return { kind: 'too_many', total: batch.items + part.items.length, limit: maxItems };
  }
  return null;
}

/** All items' keys from the parts' `fairness_keys` (in index order); null when no part named one. */
export function joinKeys(
  parts: { first_index: number; count: number; fairness_keys: string | null }[],
): (string | null)[] | null {
  if (parts.every((p) => p.fairness_keys === null)) return null;
  const keys: (string | null)[] = [];
  for (const p of parts) {
    const own = p.fairness_keys === null ? null : (JSON.parse(p.fairness_keys) as (string | null)[]);
    for (let i = 0; i < p.count; i++) keys[p.first_index + i] = own?.[i] ?? null;
  }
  return Array.from(keys, (k) => k ?? null);
}

/** Picks `indexes` out of the parts that hold them; throws when one is missing. */
export function pickItems(
  batchId: string,
  parts: { first_index: number; items: string | null }[],
  indexes: number[],
): unknown[] {
  const byIndex = new Map<number, unknown>();
  const wanted = new Set(indexes);
  for (const p of parts) {
    if (p.items === null) continue;
    (JSON.parse(p.items) as unknown[]).forEach((item, i) => {
      if (wanted.has(p.first_index + i)) byIndex.set(p.first_index + i, item);
    });
  }
  return indexes.map((i) => {
    if (!byIndex.has(i)) throw new Error(`batch ${batchId} has no stored item ${i}`);
    return byIndex.get(i);
  });
}

export const BATCH_ITEMS_DDL = `
  CREATE TABLE IF NOT EXISTS batches (
    batch_id            TEXT PRIMARY KEY,
    tenant              TEXT NOT NULL,
    agent               TEXT NOT NULL,
    priority            TEXT NOT NULL,
    tokens_floor        BIGINT NOT NULL,
    on_budget_exhausted TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('open', 'committed')),
    items               INTEGER NOT NULL DEFAULT 0,
    parts               INTEGER NOT NULL DEFAULT 0,
    estimate_sum        BIGINT NOT NULL DEFAULT 0,
    started             INTEGER NOT NULL DEFAULT 0,
    committed_at        BIGINT
  );
  CREATE INDEX IF NOT EXISTS batches_tenant_state ON batches (tenant, state);
  CREATE TABLE IF NOT EXISTS batch_parts (
    batch_id    TEXT NOT NULL,
    part        INTEGER NOT NULL,
    body_hash   TEXT NOT NULL,
    first_index INTEGER NOT NULL,
    count       INTEGER NOT NULL,
    items       TEXT,
    PRIMARY KEY (batch_id, part)
  );`;

/** Fairness keys (issue 47), added to tables made before them: SQLite adds them when missing, PostgreSQL migrates. */
export const KEY_COLUMNS = [
  'ALTER TABLE batches ADD COLUMN fairness_key TEXT',
  'ALTER TABLE batch_parts ADD COLUMN fairness_keys TEXT',
] as const;

/** The SQL both engines share (`?` placeholders; the PostgreSQL store numbers them). */
export const BATCH_SQL = {
  insert:
    'INSERT INTO batches (batch_id, tenant, agent, priority, tokens_floor, on_budget_exhausted, created_at, state, fairness_key) ' +
    "VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?)",
  get: 'SELECT * FROM batches WHERE batch_id = ?',
  countOpen: "SELECT count(*) AS n FROM batches WHERE tenant = ? AND state = 'open' AND created_at >= ?",
  seenPart: 'SELECT body_hash, first_index, count FROM batch_parts WHERE batch_id = ? AND part = ?',
  insertPart:
    'INSERT INTO batch_parts (batch_id, part, body_hash, first_index, count, items, fairness_keys) VALUES (?, ?, ?, ?, ?, ?, ?)',
  grow: 'UPDATE batches SET items = items + ?, parts = parts + 1, estimate_sum = estimate_sum + ? WHERE batch_id = ?',
  commit: "UPDATE batches SET state = 'committed', committed_at = ? WHERE batch_id = ? AND state = 'open'",
  reopen:
    "UPDATE batches SET state = 'open', committed_at = NULL WHERE batch_id = ? AND state = 'committed' AND started = 0",
  markStarted: 'UPDATE batches SET started = 1 WHERE batch_id = ?',
  unstarted:
    "SELECT * FROM batches WHERE state = 'committed' AND started = 0 AND committed_at < ? ORDER BY committed_at",
  partsCovering:
    'SELECT first_index, items FROM batch_parts WHERE batch_id = ? AND first_index <= ? AND first_index + count > ? ORDER BY first_index',
  partKeys:
    'SELECT first_index, count, fairness_keys FROM batch_parts WHERE batch_id = ? AND items IS NOT NULL',
  dropItems: 'UPDATE batch_parts SET items = NULL, fairness_keys = NULL WHERE batch_id = ?',
  purgeParts:
    "DELETE FROM batch_parts WHERE batch_id IN (SELECT batch_id FROM batches WHERE state = 'open' AND created_at < ?)",
  purgeBatches: "DELETE FROM batches WHERE state = 'open' AND created_at < ?",
} as const;

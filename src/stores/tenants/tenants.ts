import type { BudgetPeriod, TenantSettings } from '../../scheduler/types';

export interface TenantRecord {
  tenant: string;
  settings: TenantSettings;
  /** A disabled tenant's keys are refused (403 tenant_disabled) and its queued runs wait, kept. */
  disabled: boolean;
  /** True when the tenant has an approver key: then only that key decides its gates. */
  approverKey: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A row as either engine returns it (PostgreSQL's BIGINT arrives as a string). */
export interface TenantRow {
  id: string;
  weight: number;
  max_queued: number;
  max_in_flight: number;
  budget_tokens: number | string | null;
  budget_period: BudgetPeriod;
  on_budget_exhausted: 'fail' | 'park';
  /** The tenant's `keyWeights` as JSON text, or null when it has none. */
  key_weights: string | null;
  disabled_at: number | string | null;
  has_approver: number | boolean;
  created_at: number | string;
  updated_at: number | string;
}

/** The tenant store both engines implement (`openStore` picks one). */
export interface TenantStore {
  get(tenant: string): Promise<TenantRecord | undefined>;
  findByKeyHash(keyHash: string): Promise<TenantRecord | undefined>;
  list(): Promise<TenantRecord[]>;
  /** Inserts a new tenant; false when the id is taken (nothing changes then). */
  create(tenant: string, settings: TenantSettings, keyHash: string, now: number): Promise<boolean>;
  /** Replaces a tenant's settings; false when there is no such tenant. */
  update(tenant: string, settings: TenantSettings, now: number): Promise<boolean>;
  /** Replaces the key hash, so the previous key stops working at once; false when there is no such tenant. */
  setKeyHash(tenant: string, keyHash: string, now: number): Promise<boolean>;
  /** Disables (or enables again) a tenant; false when there is no such tenant. */
  setDisabled(tenant: string, disabled: boolean, now: number): Promise<boolean>;
  /** Sets (replacing any previous one) the approver key's hash; false when there is no such tenant. */
  setApproverKeyHash(tenant: string, keyHash: string, now: number): Promise<boolean>;
  /** The tenant whose approver key has this hash. */
  findByApproverKeyHash(keyHash: string): Promise<TenantRecord | undefined>;
  /**
   * Deletes the tenant with its keys, triggers, webhook secrets and settings (its events' records go
   * too); false when there is no such tenant.
   */
  delete(tenant: string): Promise<boolean>;
}

export const TENANTS_DDL = `
  CREATE TABLE IF NOT EXISTS tenants (
    id            TEXT PRIMARY KEY,
    weight        REAL NOT NULL,
    max_queued    INTEGER NOT NULL,
    max_in_flight INTEGER NOT NULL,
    budget_tokens INTEGER,
    budget_period TEXT NOT NULL,
    on_budget_exhausted TEXT NOT NULL DEFAULT 'fail',
    key_weights   TEXT,
    disabled_at   INTEGER,
    key_hash      TEXT NOT NULL UNIQUE,
    approver_key_hash TEXT UNIQUE,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
  );`;

export const TENANT_COLUMNS =
  'id, weight, max_queued, max_in_flight, budget_tokens, budget_period, on_budget_exhausted, key_weights, ' +
  'disabled_at, ' +
  '(approver_key_hash IS NOT NULL) AS has_approver, created_at, updated_at';

export function toTenantRecord(row: TenantRow): TenantRecord {
  return {
    tenant: row.id,
    settings: {
      weight: Number(row.weight),
      maxQueued: Number(row.max_queued),
      maxInFlight: Number(row.max_in_flight),
      budget: {
        tokens: row.budget_tokens === null ? null : Number(row.budget_tokens),
        period: row.budget_period,
      },
      onBudgetExhausted: row.on_budget_exhausted === 'park' ? 'park' : 'fail',
      ...(row.key_weights ? { keyWeights: JSON.parse(row.key_weights) as Record<string, number> } : {}),
    },
    disabled: row.disabled_at !== null,
    approverKey: Boolean(row.has_approver),
    createdAt: new Date(Number(row.created_at)).toISOString(),
    updatedAt: new Date(Number(row.updated_at)).toISOString(),
  };
}

export function settingsParams(s: TenantSettings) {
  return {
    weight: s.weight,
    max_queued: s.maxQueued,
    max_in_flight: s.maxInFlight,
    budget_tokens: s.budget.tokens,
    budget_period: s.budget.period,
    on_budget_exhausted: s.onBudgetExhausted ?? 'fail',
    key_weights: s.keyWeights && Object.keys(s.keyWeights).length > 0 ? JSON.stringify(s.keyWeights) : null,
  };
}

/**
 * The settings the scheduler holds for a tenant: its own, except that a disabled tenant may have
 * nothing in flight, so its queued units stay queued (kept, not admitted) until it is enabled again.
 */
export function schedulerSettings(record: Pick<TenantRecord, 'settings' | 'disabled'>): TenantSettings {
  return record.disabled ? { ...record.settings, maxInFlight: 0 } : record.settings;
}

/**
 * What deleting a tenant removes besides its row (its keys and settings), in the API store: every
 * table that carries its id (its events' records, triggers, webhook secrets, idempotency keys, and its
 * webhook endpoints with their outbox, deliveries and attempts), and its rate buckets. Each statement
 * takes the tenant as its one `?`; attempts go first, found through the endpoints they belong to.
 * Its runs' histories stay in Temporal (the id is not re-created while they are listed there).
 */
export const TENANT_DELETES: readonly string[] = [
  'DELETE FROM webhook_attempts WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE tenant = ?)',
  ...[
    'webhook_deliveries',
    'webhook_events',
    'webhook_endpoints',
    'event_runs',
    'events',
    'triggers',
    'webhook_secrets',
    'idempotency_keys',
  ].map((t) => `DELETE FROM ${t} WHERE tenant = ?`),
];

/** The rate buckets' keys of a tenant (`SharedBuckets` scopes `request` and `submit`). */
export const tenantBucketKeys = (tenant: string): string[] => [`request:${tenant}`, `submit:${tenant}`];

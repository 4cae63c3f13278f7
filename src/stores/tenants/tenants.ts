import type Database from 'better-sqlite3';
import type { BudgetPeriod, TenantSettings } from '../../scheduler/types';

export interface TenantRecord {
  tenant: string;
  settings: TenantSettings;
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
    key_hash      TEXT NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
  );`;

/** Schema v3: stores made before it gain the `on_budget_exhausted` column (every tenant `fail`). */
export function migrateTenants(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(tenants)').all();
  if (!columns.some((c) => c.name === 'on_budget_exhausted'))
    db.exec(`ALTER TABLE tenants ADD COLUMN on_budget_exhausted TEXT NOT NULL DEFAULT 'fail'`);
}

export const TENANT_COLUMNS =
  'id, weight, max_queued, max_in_flight, budget_tokens, budget_period, on_budget_exhausted, created_at, updated_at';

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
    },
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
  };
}

/** Tenants and the sha256 of their API key, in SQLite. Keys themselves are never stored. */
export class SqliteTenantStore implements TenantStore {
  private readonly stmts;

  constructor(db: Database.Database) {
    this.stmts = {
      get: db.prepare<[string], TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`),
      byKey: db.prepare<[string], TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE key_hash = ?`),
      list: db.prepare<[], TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY id`),
      insert: db.prepare(
        `INSERT INTO tenants (id, weight, max_queued, max_in_flight, budget_tokens, budget_period, on_budget_exhausted, key_hash, created_at, updated_at)
         VALUES (@id, @weight, @max_queued, @max_in_flight, @budget_tokens, @budget_period, @on_budget_exhausted, @key_hash, @now, @now)
         ON CONFLICT (id) DO NOTHING`,
      ),
      update: db.prepare(
        `UPDATE tenants SET weight = @weight, max_queued = @max_queued, max_in_flight = @max_in_flight,
           budget_tokens = @budget_tokens, budget_period = @budget_period,
           on_budget_exhausted = @on_budget_exhausted, updated_at = @now WHERE id = @id`,
      ),
      setKey: db.prepare(`UPDATE tenants SET key_hash = @key_hash, updated_at = @now WHERE id = @id`),
    };
  }

  async get(tenant: string): Promise<TenantRecord | undefined> {
    const row = this.stmts.get.get(tenant);
    return row && toTenantRecord(row);
  }

  async findByKeyHash(keyHash: string): Promise<TenantRecord | undefined> {
    const row = this.stmts.byKey.get(keyHash);
    return row && toTenantRecord(row);
  }

  async list(): Promise<TenantRecord[]> {
    return this.stmts.list.all().map(toTenantRecord);
  }

  async create(tenant: string, settings: TenantSettings, keyHash: string, now: number): Promise<boolean> {
    const params = { id: tenant, ...settingsParams(settings), key_hash: keyHash, now };
    return this.stmts.insert.run(params).changes === 1;
  }

  async update(tenant: string, settings: TenantSettings, now: number): Promise<boolean> {
    return this.stmts.update.run({ id: tenant, ...settingsParams(settings), now }).changes === 1;
  }

  async setKeyHash(tenant: string, keyHash: string, now: number): Promise<boolean> {
    return this.stmts.setKey.run({ id: tenant, key_hash: keyHash, now }).changes === 1;
  }
}

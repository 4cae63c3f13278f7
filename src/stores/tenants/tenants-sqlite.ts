import type Database from 'better-sqlite3';
import type { TenantSettings } from '../../scheduler/types';
import { TENANT_COLUMNS, TENANT_DELETES, settingsParams, tenantBucketKeys, toTenantRecord } from './tenants';
import type { TenantRecord, TenantRow, TenantStore } from './tenants';

/**
 * Schema v3: stores made before it gain the `on_budget_exhausted` column (every tenant `fail`);
 * v4: the `disabled_at` column (every tenant enabled); v5: the `approver_key_hash` column (none set);
 * v8: the `key_weights` column (no tenant weighs its fairness keys).
 */
export function migrateTenants(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(tenants)').all();
  if (!columns.some((c) => c.name === 'on_budget_exhausted'))
    db.exec(`ALTER TABLE tenants ADD COLUMN on_budget_exhausted TEXT NOT NULL DEFAULT 'fail'`);
  if (!columns.some((c) => c.name === 'disabled_at'))
    db.exec('ALTER TABLE tenants ADD COLUMN disabled_at INTEGER');
  if (!columns.some((c) => c.name === 'approver_key_hash')) {
    db.exec('ALTER TABLE tenants ADD COLUMN approver_key_hash TEXT');
    db.exec('CREATE UNIQUE INDEX IF NOT EXISTS tenants_approver_key ON tenants (approver_key_hash)');
  }
  if (!columns.some((c) => c.name === 'key_weights'))
    db.exec('ALTER TABLE tenants ADD COLUMN key_weights TEXT');
}

/** Tenants and the sha256 of their API key, in SQLite. Keys themselves are never stored. */
export class SqliteTenantStore implements TenantStore {
  private readonly stmts;
  private readonly remove: (tenant: string) => boolean;

  constructor(db: Database.Database) {
    const deletes = TENANT_DELETES.map((sql) => db.prepare<[string]>(sql));
    const deleteBucket = db.prepare<[string]>('DELETE FROM rate_buckets WHERE key = ?');
    const deleteTenant = db.prepare<[string]>('DELETE FROM tenants WHERE id = ?');
    this.remove = db.transaction((tenant: string) => {
      for (const d of deletes) d.run(tenant);
      for (const k of tenantBucketKeys(tenant)) deleteBucket.run(k);
      return deleteTenant.run(tenant).changes === 1;
    });
    this.stmts = {
      get: db.prepare<[string], TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`),
      byKey: db.prepare<[string], TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE key_hash = ?`),
      byApproverKey: db.prepare<[string], TenantRow>(
        `SELECT ${TENANT_COLUMNS} FROM tenants WHERE approver_key_hash = ?`,
      ),
      setApproverKey: db.prepare(
        `UPDATE tenants SET approver_key_hash = @key_hash, updated_at = @now WHERE id = @id`,
      ),
      list: db.prepare<[], TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY id`),
      insert: db.prepare(
        `INSERT INTO tenants (id, weight, max_queued, max_in_flight, budget_tokens, budget_period, on_budget_exhausted, key_weights, key_hash, created_at, updated_at)
         VALUES (@id, @weight, @max_queued, @max_in_flight, @budget_tokens, @budget_period, @on_budget_exhausted, @key_weights, @key_hash, @now, @now)
         ON CONFLICT (id) DO NOTHING`,
      ),
      update: db.prepare(
        `UPDATE tenants SET weight = @weight, max_queued = @max_queued, max_in_flight = @max_in_flight,
           budget_tokens = @budget_tokens, budget_period = @budget_period,
           on_budget_exhausted = @on_budget_exhausted, key_weights = @key_weights, updated_at = @now WHERE id = @id`,
      ),
      setKey: db.prepare(`UPDATE tenants SET key_hash = @key_hash, updated_at = @now WHERE id = @id`),
      setDisabled: db.prepare(
        `UPDATE tenants SET disabled_at = CASE WHEN @disabled = 1 THEN COALESCE(disabled_at, @now) END,
           updated_at = @now WHERE id = @id`,
      ),
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

  async setDisabled(tenant: string, disabled: boolean, now: number): Promise<boolean> {
    return this.stmts.setDisabled.run({ id: tenant, disabled: disabled ? 1 : 0, now }).changes === 1;
  }

  async setApproverKeyHash(tenant: string, keyHash: string, now: number): Promise<boolean> {
    return this.stmts.setApproverKey.run({ id: tenant, key_hash: keyHash, now }).changes === 1;
  }

  async findByApproverKeyHash(keyHash: string): Promise<TenantRecord | undefined> {
    const row = this.stmts.byApproverKey.get(keyHash);
    return row && toTenantRecord(row);
  }

  async delete(tenant: string): Promise<boolean> {
    return this.remove(tenant);
  }
}

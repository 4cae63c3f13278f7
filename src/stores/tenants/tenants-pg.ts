import type { Pool } from 'pg';
import type { TenantSettings } from '../../scheduler/types';
import { settingsParams, TENANT_COLUMNS, TENANT_DELETES, tenantBucketKeys, toTenantRecord } from './tenants';
import type { TenantRecord, TenantRow, TenantStore } from './tenants';

/** A tenant's settings as the positional values $2–$8 of both statements (the settings' seven columns). */
function settingsValues(settings: TenantSettings): unknown[] {
  const p = settingsParams(settings);
  return [
    p.weight,
    p.max_queued,
    p.max_in_flight,
    p.budget_tokens,
    p.budget_period,
    p.on_budget_exhausted,
    p.key_weights,
  ];
}

/** Tenants and the sha256 of their API key, in PostgreSQL (shared by every API process). */
export class PgTenantStore implements TenantStore {
  constructor(private readonly pool: Pool) {}

  private async one(where: string, value: string): Promise<TenantRecord | undefined> {
    const r = await this.pool.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE ${where} = $1`, [
      value,
    ]);
    const row = r.rows[0];
    return row && toTenantRecord(row);
  }

  get(tenant: string): Promise<TenantRecord | undefined> {
    return this.one('id', tenant);
  }

  findByKeyHash(keyHash: string): Promise<TenantRecord | undefined> {
    return this.one('key_hash', keyHash);
  }

  async list(): Promise<TenantRecord[]> {
    const r = await this.pool.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY id`);
    return r.rows.map(toTenantRecord);
  }

  async create(tenant: string, settings: TenantSettings, keyHash: string, now: number): Promise<boolean> {
    const r = await this.pool.query(
      `INSERT INTO tenants (id, weight, max_queued, max_in_flight, budget_tokens, budget_period,
         on_budget_exhausted, key_weights, key_hash, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
       ON CONFLICT (id) DO NOTHING`,
      [tenant, ...settingsValues(settings), keyHash, now],
    );
    return r.rowCount === 1;
  }

  async update(tenant: string, settings: TenantSettings, now: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE tenants SET weight = $2, max_queued = $3, max_in_flight = $4, budget_tokens = $5,
         budget_period = $6, on_budget_exhausted = $7, key_weights = $8, updated_at = $9 WHERE id = $1`,
      [tenant, ...settingsValues(settings), now],
    );
    return r.rowCount === 1;
  }

  async setKeyHash(tenant: string, keyHash: string, now: number): Promise<boolean> {
    const r = await this.pool.query('UPDATE tenants SET key_hash = $2, updated_at = $3 WHERE id = $1', [
      tenant,
      keyHash,
      now,
    ]);
    return r.rowCount === 1;
  }

  async setDisabled(tenant: string, disabled: boolean, now: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE tenants SET disabled_at = CASE WHEN $2 THEN COALESCE(disabled_at, $3) END, updated_at = $3
       WHERE id = $1`,
      [tenant, disabled, now],
    );
    return r.rowCount === 1;
  }

  async setApproverKeyHash(tenant: string, keyHash: string, now: number): Promise<boolean> {
    const r = await this.pool.query(
      'UPDATE tenants SET approver_key_hash = $2, updated_at = $3 WHERE id = $1',
      [tenant, keyHash, now],
    );
    return r.rowCount === 1;
  }

  findByApproverKeyHash(keyHash: string): Promise<TenantRecord | undefined> {
    return this.one('approver_key_hash', keyHash);
  }

  async delete(tenant: string): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const sql of TENANT_DELETES) await client.query(sql.replace('?', '$1'), [tenant]);
      await client.query('DELETE FROM rate_buckets WHERE key = ANY($1)', [tenantBucketKeys(tenant)]);
      const r = await client.query('DELETE FROM tenants WHERE id = $1', [tenant]);
      await client.query('COMMIT');
      return r.rowCount === 1;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

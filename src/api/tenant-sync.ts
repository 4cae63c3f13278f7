import type { Logger } from 'pino';
import type { ApiStore } from '../stores/api/api-store';
import { schedulerSettings, type TenantRecord } from '../stores/tenants/tenants';
import type { FleetPort } from '../contract/fleet-port';

/**
 * Sends every stored tenant's settings to the scheduler (e.g. at startup, or after the scheduler
 * workflow was reset). Idempotent; returns how many tenants were sent.
 */
export async function syncTenantsToFleet(store: ApiStore, fleet: FleetPort, log?: Logger): Promise<number> {
  const tenants = await store.listTenants();
  for (const record of tenants) await resyncTenant(fleet, record);
  log?.info({ tenants: tenants.length }, 'tenants synced to the scheduler');
  return tenants.length;
}

/** Sends one stored tenant's scheduler settings (`schedulerSettings`) to the scheduler again (it restarted without them, or was away). */
export async function resyncTenant(fleet: FleetPort, record: TenantRecord, log?: Logger): Promise<void> {
  log?.info({ tenant: record.tenant }, 'scheduler did not know the tenant; re-syncing its settings');
  await fleet.upsertTenant(record.tenant, schedulerSettings(record));
}

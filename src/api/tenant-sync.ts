import type { Logger } from 'pino';
import type { ApiStore } from './api-store';
import type { FleetPort } from '../contract/fleet-port';

/**
 * Sends every stored tenant's settings to the scheduler (e.g. at startup, or after the scheduler
 * workflow was reset). Idempotent; returns how many tenants were sent.
 */
export async function syncTenantsToFleet(store: ApiStore, fleet: FleetPort, log?: Logger): Promise<number> {
  const tenants = store.listTenants();
  for (const { tenant, settings } of tenants) await fleet.upsertTenant(tenant, settings);
  log?.info({ tenants: tenants.length }, 'tenants synced to the scheduler');
  return tenants.length;
}

import type { EventStore } from '../events/event-store';
import type { IdempotencyStore } from '../idempotency/idempotency';
import type { TenantRecord, TenantStore } from '../tenants/tenants';
import type { RateLimitStore } from '../rate-limits/rate-limits';
import type { WebhookStore } from '../webhooks/webhooks';

/**
 * The API's own state: tenants (settings and key hashes), idempotency keys, events. One interface,
 * two engines: a SQLite file (one host, the embedded default) or PostgreSQL (shared by every host).
 */
export interface ApiStore {
  readonly tenants: TenantStore;
  readonly idempotency: IdempotencyStore;
  /** Events, their runs, triggers and webhook secrets. */
  readonly events: EventStore;
  /** The tenants' request and submission buckets, shared by every API process on the store. */
  readonly rateLimits: RateLimitStore;
  /** Webhooks out: endpoints, the outbox of run events, deliveries and their attempts. */
  readonly webhooks: WebhookStore;
  /** Every tenant with its settings, e.g. to re-sync them to the scheduler at startup. */
  listTenants(): Promise<TenantRecord[]>;
  close(): Promise<void>;
}

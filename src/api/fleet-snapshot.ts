import type { Logger } from 'pino';
import type { FleetPort } from '../contract/fleet-port';
import type { SchedulerStatus, TenantStatus } from '../scheduler/types';
import { withTimeout } from '../util/with-timeout';

/** One read of the scheduler: its status and every tenant's (two queries, whatever the tenant count). */
export interface FleetSnapshot {
  /** ms since epoch when the read began. */
  at: number;
  status: SchedulerStatus;
  /** The tenants the scheduler knows, in the store's order; null when that read failed this time. */
  tenants: TenantStatus[] | null;
}

export interface FleetSnapshotOptions {
  fleet: FleetPort;
  /** Tenant names to read (the API's tenant store). */
  tenants: () => string[] | Promise<string[]>;
  log: Logger;
  now: () => number;
  timeoutMs?: number;
}

/**
 * The one reader of the scheduler's status for the API's metrics and the operator console: a read
 * younger than the caller's `maxAgeMs` is shared, and concurrent callers share the read in progress.
 * Each read is one `status` query and one `tenants` query (per 200 tenants), so the scheduler is not
 * asked 1 + N queries per refresh, nor once per consumer.
 */
export class FleetSnapshots {
  private last: FleetSnapshot | undefined;
  private reading: Promise<FleetSnapshot> | undefined;

  constructor(private readonly o: FleetSnapshotOptions) {}

  /** The latest snapshot if younger than `maxAgeMs`, else a new read; rejects when the status cannot be read. */
  read(maxAgeMs: number): Promise<FleetSnapshot> {
    const last = this.last;
    if (last && this.o.now() - last.at < maxAgeMs) return Promise.resolve(last);
    this.reading ??= this.fresh().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async fresh(): Promise<FleetSnapshot> {
    const at = this.o.now();
    const timeout = this.o.timeoutMs ?? 3000;
    const status = await withTimeout(this.o.fleet.schedulerStatus(), timeout, 'schedulerStatus');
    let tenants: TenantStatus[] | null = null;
    try {
      const names = await this.o.tenants();
      const read = await withTimeout(this.o.fleet.tenantStatuses(names), timeout, 'tenantStatuses');
      tenants = read.filter((t): t is TenantStatus => t !== null);
    } catch (err) {
      this.o.log.warn({ err }, 'fleet snapshot: tenant statuses unavailable');
    }
    const snapshot = { at, status, tenants };
    this.last = snapshot;
    return snapshot;
  }
}

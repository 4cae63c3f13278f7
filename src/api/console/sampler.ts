import type { Logger } from 'pino';
import type { FleetPort } from '../../contract/fleet-port';
import { FleetSnapshots } from '../fleet-snapshot';
import type { Priority, SchedulerStatus, TenantStatus } from '../../scheduler/types';
import { PRIORITIES } from '../../scheduler/types';
import { Ring } from './ring';
import { shareHint } from './share-hints';
import type { ShareHint } from './share-hints';

/** The door's shed reasons, in the order the console draws them. */
export const SHED_REASONS = [
  'queue_full',
  'wait_too_long',
  'rate_limited',
  'budget_exhausted',
  'draining',
] as const;
export type ShedReason = (typeof SHED_REASONS)[number];

/** One point of the console's charts: rates over the interval that ended at `t`. */
export interface Sample {
  seq: number;
  /** ms since epoch. */
  t: number;
  mode: SchedulerStatus['mode'];
  inFlight: number;
  queued: Record<Priority, number>;
  /** Admissions per second by lane over the interval (null on the first sample). */
  admissionsPerSecond: Record<Priority, number> | null;
  /** Tokens per minute the provider served lately, its advertised limit, and the governor's target. */
  servedTpm: number | null;
  quotaTpm: number | null;
  targetTpm: number;
  throttledPerSecond: number | null;
  shedsPerSecond: Record<ShedReason, number> | null;
  /** Tokens each tenant spent during the interval (ledger deltas). */
  tenantTokens: Record<string, number>;
}

export interface TenantRow {
  tenant: string;
  weight: number;
  /** Share of the tokens spent in the window, 0..1 (null when nothing was spent). */
  tokenShare: number | null;
  /** weight / Σ weights of the tenants active in the window. */
  entitledShare: number | null;
  tokensInWindow: number;
  queued: number;
  inFlight: number;
  budget: number | null;
  period: string;
  spent: number;
  remaining: number | null;
  /** Why the share sits below the entitlement (budget, cap, lane, demand), or null. */
  hint: ShareHint | null;
}

export interface ConsoleState {
  /** ms since epoch of the last successful read. */
  at: number | null;
  /** The last read failed (the message), or null. */
  error: string | null;
  sampleMs: number;
  shareWindowMs: number;
  status: SchedulerStatus | null;
  tenants: TenantRow[];
  samples: Sample[];
}

export interface SamplerOptions {
  fleet: FleetPort;
  /** Tenant names to read (the API's tenant store). */
  tenants: () => string[] | Promise<string[]>;
  /** The API's shared reader of the scheduler (the metrics use it too); default: one of its own. */
  snapshots?: FleetSnapshots;
  /** Door sheds by reason, cumulative (the API's counter). */
  sheds: () => Promise<Partial<Record<string, number>>>;
  log: Logger;
  now?: () => number;
  /** Sampling interval; 2 s. */
  sampleMs?: number;
  /** History kept; 15 minutes. */
  historyMs?: number;
  /** Window of the tenants' token shares; 5 minutes. */
  shareWindowMs?: number;
}

interface Cumulative {
  t: number;
  admitted: Record<Priority, number>;
  throttled: number;
  sheds: Record<ShedReason, number>;
  spent: Map<string, { spent: number; periodStart: string }>;
}

/**
 * Reads the scheduler (its status and all tenants: two queries) once per interval, whatever the number
 * of viewers, into a ring of the last 15 minutes: a console opened late sees the history, and a hundred
 * open consoles cost the scheduler one read per interval, which the metrics endpoint shares.
 */
export class ConsoleSampler {
  private readonly o: Required<Omit<SamplerOptions, 'now' | 'snapshots'>> & { now: () => number };
  private readonly snapshots: FleetSnapshots;
  private readonly ring: Ring<Sample>;
  private seq = 0;
  private prev: Cumulative | undefined;
  private status: SchedulerStatus | null = null;
  private tenantStatuses: TenantStatus[] = [];
  private at: number | null = null;
  private error: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;

  constructor(opts: SamplerOptions) {
    this.o = {
      sampleMs: 2000,
      historyMs: 15 * 60_000,
      shareWindowMs: 5 * 60_000,
      now: Date.now,
      ...opts,
    };
    this.ring = new Ring(Math.ceil(this.o.historyMs / this.o.sampleMs) + 1);
    this.snapshots =
      opts.snapshots ??
      new FleetSnapshots({
        fleet: this.o.fleet,
        tenants: () => this.o.tenants(),
        log: this.o.log,
        now: this.o.now,
      });
  }

  /** Samples every interval until stop(); idempotent. The timer does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.stopped = false;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.o.sampleMs);
    this.timer.unref();
  }

  /** Stops sampling and waits for a read in progress (after this, nothing touches the fleet or the store). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopped = true;
    await this.inFlight;
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** One read of the fleet; concurrent callers share it. */
  sample(): Promise<void> {
    this.inFlight ??= this.read()
      .catch((err: unknown) => {
        // Never an unhandled rejection from a timer: a failed read is reported in the state.
        this.error = err instanceof Error ? err.message : String(err);
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /** The state after `since` (a sample seq): only the newer samples are sent. */
  state(since = 0): ConsoleState {
    return {
      at: this.at,
      error: this.error,
      sampleMs: this.o.sampleMs,
      shareWindowMs: this.o.shareWindowMs,
      status: this.status,
      tenants: this.tenantRows(),
      samples: this.ring.items().filter((s) => s.seq > since),
    };
  }

  private async read(): Promise<void> {
    if (this.stopped) return; // the stack is closing: its store may be gone
    let snapshot;
    try {
      // Always a fresh read at each tick; the metrics reuse it (FleetSnapshots).
      snapshot = await this.snapshots.read(0);
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
      this.o.log.warn({ err }, 'console: scheduler status unavailable');
      return;
    }
    if (this.stopped) return;
    const { at: now, status } = snapshot;
    // When the tenants' read fails, each keeps its last known status (the table must not flicker);
    // its token delta for this interval is then 0 and is caught up at the next good read.
    const tenants = snapshot.tenants ?? this.tenantStatuses;
    let sheds: Partial<Record<string, number>> = {};
    try {
      sheds = await this.o.sheds();
    } catch {
      /* the counter is local: it does not fail in practice; keep zeros */
    }
    this.push(now, status, tenants, sheds);
    this.status = status;
    this.tenantStatuses = tenants;
    this.at = now;
    this.error = null;
  }

  private push(
    now: number,
    status: SchedulerStatus,
    tenants: TenantStatus[],
    sheds: Partial<Record<string, number>>,
  ): void {
    const cur: Cumulative = {
      t: now,
      admitted: { ...status.counters.admittedByPriority },
      throttled: status.counters.throttled,
      sheds: Object.fromEntries(SHED_REASONS.map((r) => [r, sheds[r] ?? 0])) as Record<ShedReason, number>,
      spent: new Map(
        tenants.map((t) => [t.tenant, { spent: t.ledger.spent, periodStart: t.ledger.periodStart }]),
      ),
    };
    const prev = this.prev;
    const dt = prev ? (now - prev.t) / 1000 : 0;
    // A counter that went down (a new scheduler chain, an API restart) restarts from 0.
    const rate = (a: number, b: number) => (dt > 0 ? Math.max(0, a >= b ? a - b : a) / dt : 0);
    const tenantTokens: Record<string, number> = {};
    for (const [tenant, c] of cur.spent) {
      const p = prev?.spent.get(tenant);
      if (!p) continue;
      const delta = p.periodStart === c.periodStart ? c.spent - p.spent : c.spent;
      if (delta > 0) tenantTokens[tenant] = delta;
    }
    this.ring.push({
      seq: ++this.seq,
      t: now,
      mode: status.mode,
      inFlight: status.inFlight,
      queued: { ...status.queued.byPriority },
      admissionsPerSecond: prev
        ? (Object.fromEntries(PRIORITIES.map((p) => [p, rate(cur.admitted[p], prev.admitted[p])])) as Record<
            Priority,
            number
          >)
        : null,
      servedTpm: status.governor.servedTokensPerMinute ?? null,
      quotaTpm: status.governor.providerTokensPerMinute ?? null,
      targetTpm: status.governor.tokensPerMinute,
      throttledPerSecond: prev ? rate(cur.throttled, prev.throttled) : null,
      shedsPerSecond: prev
        ? (Object.fromEntries(SHED_REASONS.map((r) => [r, rate(cur.sheds[r], prev.sheds[r])])) as Record<
            ShedReason,
            number
          >)
        : null,
      tenantTokens,
    });
    this.prev = cur;
  }

  private tenantRows(): TenantRow[] {
    const since = (this.at ?? 0) - this.o.shareWindowMs;
    const tokens = new Map<string, number>();
    for (const s of this.ring.items()) {
      if (s.t <= since) continue;
      for (const [tenant, n] of Object.entries(s.tenantTokens))
        tokens.set(tenant, (tokens.get(tenant) ?? 0) + n);
    }
    const total = [...tokens.values()].reduce((a, b) => a + b, 0);
    const queuedOf = (t: TenantStatus) => PRIORITIES.reduce((a, p) => a + t.queuedByPriority[p], 0);
    const active = this.tenantStatuses.filter(
      (t) => (tokens.get(t.tenant) ?? 0) > 0 || queuedOf(t) > 0 || t.inFlight > 0,
    );
    const activeWeight = active.reduce((a, t) => a + t.settings.weight, 0);
    return this.tenantStatuses.map((t) => {
      const used = tokens.get(t.tenant) ?? 0;
      const isActive = active.includes(t);
      const tokenShare = total > 0 ? used / total : null;
      const entitledShare = isActive && activeWeight > 0 ? t.settings.weight / activeWeight : null;
      return {
        tenant: t.tenant,
        weight: t.settings.weight,
        tokenShare,
        entitledShare,
        tokensInWindow: used,
        queued: queuedOf(t),
        inFlight: t.inFlight,
        budget: t.ledger.budget,
        period: t.ledger.period,
        spent: t.ledger.spent,
        remaining: t.ledger.remaining,
        hint: shareHint(t, tokenShare, entitledShare, this.tenantStatuses),
      };
    });
  }
}

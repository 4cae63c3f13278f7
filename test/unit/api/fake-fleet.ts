import type { SettingsPatch } from '../../../src/scheduler/fleet-settings';
import type {
  BatchSpec,
  BatchView,
  FleetPort,
  RunListItem,
  RunListQuery,
  RunSpec,
  RunStatus,
  RunView,
} from '../../../src/contract/fleet-port';
import type {
  LedgerEntry,
  Priority,
  SchedulerStatus,
  SubmitResult,
  TenantSettings,
  TenantStatus,
} from '../../../src/scheduler/types';

type Unit = { runId: string; tenant: string; priority: Priority; cost: number };
type Refused = Extract<SubmitResult, { accepted: false }>;

const FINISHED: RunStatus[] = ['completed', 'failed', 'cancelled'];

/** An in-memory fleet with the scheduler's door behaviour in miniature: caps, budget, drain, unknown tenants. */
export class FakeFleet implements FleetPort {
  readonly tenants = new Map<string, TenantSettings>();
  readonly runs = new Map<string, RunView>();
  readonly specs = new Map<string, RunSpec>();
  readonly batches = new Map<string, BatchSpec>();
  readonly submitCalls: Unit[][] = [];
  readonly startRunCalls: RunSpec[] = [];
  readonly upsertCalls: { tenant: string; settings: TenantSettings }[] = [];
  readonly reserved = new Map<string, number>();
  intake: 'open' | 'refuse' | 'hold' = 'open';
  config = {
    concurrency: 100,
    floors: { standard: 0.1, batch: 0.05 },
    leaseTtlSeconds: 60,
    globalMaxQueued: 20_000,
  };
  counters = {
    submitted: 0,
    admitted: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    shed: 0,
    expired: 0,
    gated: 0,
    adopted: 0,
  };
  isReady = true;
  /** When set, submit waits for it (a slow scheduler). */
  gate: Promise<void> | undefined;
  /** When set, every status call rejects (the fleet is unreachable). */
  down = false;

  async submit(units: Unit[]): Promise<SubmitResult[]> {
    this.submitCalls.push(units);
    await this.gate;
    return units.map((u) => this.offer(u));
  }

  private refuse(runId: string, code: Refused['code'], retryAfterSeconds: number): Refused {
    this.counters.shed++;
    return { runId, accepted: false, code, message: `refused: ${code}`, retryAfterSeconds };
  }

  private offer(u: Unit): SubmitResult {
    const settings = this.tenants.get(u.tenant);
    if (!settings) return this.refuse(u.runId, 'unknown_tenant', 1);
    if (this.reserved.has(`unit:${u.runId}`))
      return { runId: u.runId, accepted: true, duplicate: true, held: false };
    if (this.intake === 'refuse') return this.refuse(u.runId, 'draining', 30);
    if (this.queued(u.tenant, undefined, u.runId) >= settings.maxQueued)
      return this.refuse(u.runId, 'queue_full', 7);
    const used = this.reserved.get(u.tenant) ?? 0;
    if (settings.budget.tokens !== null && used + u.cost > settings.budget.tokens) {
      return this.refuse(u.runId, 'budget_exhausted', 3600);
    }
    this.reserved.set(u.tenant, used + u.cost);
    this.reserved.set(`unit:${u.runId}`, u.cost);
    this.counters.submitted++;
    return { runId: u.runId, accepted: true, duplicate: false, held: this.intake === 'hold' };
  }

  private queued(tenant: string, priority?: Priority, except?: string): number {
    let n = 0;
    for (const r of this.runs.values())
      if (
        r.tenant === tenant &&
        r.status === 'queued' &&
        r.runId !== except &&
        (!priority || r.priority === priority)
      )
        n++;
    return n;
  }

  async startRun(spec: RunSpec): Promise<'started' | 'finished'> {
    this.startRunCalls.push(spec);
    const existing = this.runs.get(spec.runId);
    if (existing)
      return ['completed', 'failed', 'cancelled'].includes(existing.status) ? 'finished' : 'started';
    this.specs.set(spec.runId, spec);
    this.runs.set(spec.runId, {
      runId: spec.runId,
      tenant: spec.tenant,
      agent: spec.agent,
      priority: spec.priority,
      status: 'queued',
      createdAt: spec.createdAt,
      admittedAt: null,
      admissionSeq: null,
      finishedAt: null,
      usage: { tokens: 0 },
      waitingOn: { code: 'governor', message: 'waiting for capacity', lane: spec.priority },
      result: null,
      error: null,
      batchId: spec.batchId ?? null,
    });
    return 'started';
  }

  readonly discarded: string[] = [];

  async discardRun(runId: string): Promise<void> {
    this.discarded.push(runId);
    this.runs.delete(runId);
    this.specs.delete(runId);
  }

  /** Test helper: move a run along. */
  setStatus(runId: string, status: RunStatus): void {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no run ${runId}`);
    run.status = status;
  }

  async getRun(runId: string): Promise<RunView | null> {
    return this.runs.get(runId) ?? null;
  }

  async listRuns(q: RunListQuery): Promise<{ items: RunListItem[]; nextCursor: string | null }> {
    const all = [...this.runs.values()].filter(
      (r) =>
        (!q.tenant || r.tenant === q.tenant) &&
        (!q.status || r.status === q.status) &&
        (!q.priority || r.priority === q.priority),
    );
    const start = q.cursor ? Number(q.cursor) : 0;
    const page = all.slice(start, start + q.limit);
    const next = start + q.limit < all.length ? String(start + q.limit) : null;
    const items = page.map(({ runId, tenant, agent, priority, status, createdAt, batchId }) => ({
      runId,
      tenant,
      agent,
      priority,
      status,
      createdAt,
      batchId,
    }));
    return { items, nextCursor: next };
  }

  async cancelRun(runId: string): Promise<boolean> {
    const run = this.runs.get(runId);
    if (!run || FINISHED.includes(run.status)) return false;
    run.status = 'cancelled';
    return true;
  }

  async decide(runId: string, decision: 'approve' | 'reject'): Promise<boolean> {
    const run = this.runs.get(runId);
    if (!run || run.status !== 'awaiting_approval') return false;
    run.status = decision === 'approve' ? 'running' : 'cancelled';
    return true;
  }

  async createBatch(spec: BatchSpec) {
    const settings = this.tenants.get(spec.tenant);
    if (!settings)
      return {
        accepted: false as const,
        code: 'unknown_tenant' as const,
        message: 'unknown',
        retryAfterSeconds: 1,
      };
    if (this.intake === 'refuse')
      return {
        accepted: false as const,
        code: 'draining' as const,
        message: 'draining',
        retryAfterSeconds: 30,
      };
    if (this.queued(spec.tenant) + spec.items.length > settings.maxQueued) {
      return {
        accepted: false as const,
        code: 'queue_full' as const,
        message: 'batch does not fit',
        retryAfterSeconds: 12,
      };
    }
    this.batches.set(spec.batchId, spec);
    spec.items.forEach((input, i) => {
      const runId = `${spec.batchId}-${i}`;
      void this.startRun({
        runId,
        tenant: spec.tenant,
        agent: spec.agent,
        priority: spec.priority,
        input,
        estimatedTokens: spec.estimatedTokensPerItem,
        batchId: spec.batchId,
        createdAt: spec.createdAt,
      });
    });
    return { accepted: true as const };
  }

  private batchRuns(batchId: string): RunView[] {
    return [...this.runs.values()].filter((r) => r.batchId === batchId);
  }

  async getBatch(batchId: string): Promise<BatchView | null> {
    const spec = this.batches.get(batchId);
    if (!spec) return null;
    const runs = this.batchRuns(batchId);
    const count = (s: RunStatus) => runs.filter((r) => r.status === s).length;
    return {
      batchId,
      tenant: spec.tenant,
      total: runs.length,
      queued: count('queued'),
      running: count('running'),
      completed: count('completed'),
      failed: count('failed'),
      cancelled: count('cancelled'),
    };
  }

  async resumeBatch(batchId: string): Promise<number> {
    const failed = this.batchRuns(batchId).filter((r) => r.status === 'failed');
    for (const r of failed) r.status = 'queued';
    return failed.length;
  }

  async upsertTenant(tenant: string, settings: TenantSettings): Promise<void> {
    if (this.down) throw new Error('fleet unreachable');
    this.upsertCalls.push({ tenant, settings });
    this.tenants.set(tenant, settings);
  }

  async tenantStatus(tenant: string): Promise<TenantStatus | null> {
    if (this.down) throw new Error('fleet unreachable');
    const settings = this.tenants.get(tenant);
    if (!settings) return null;
    const reserved = this.reserved.get(tenant) ?? 0;
    const budget = settings.budget.tokens;
    return {
      tenant,
      settings,
      queuedByPriority: {
        interactive: this.queued(tenant, 'interactive'),
        standard: this.queued(tenant, 'standard'),
        batch: this.queued(tenant, 'batch'),
      },
      inFlight: [...this.runs.values()].filter((r) => r.tenant === tenant && r.status === 'running').length,
      ledger: {
        budget,
        period: settings.budget.period,
        reserved,
        spent: 42,
        remaining: budget === null ? null : budget - reserved - 42,
        periodStart: '2025-01-01T00:00:00.000Z',
      },
    };
  }

  async ledgerEntries(tenant: string, limit: number): Promise<LedgerEntry[]> {
    return [...this.specs.values()]
      .filter((s) => s.tenant === tenant)
      .slice(0, limit)
      .map((s) => ({
        at: s.createdAt,
        tenant,
        runId: s.runId,
        kind: 'reserve' as const,
        tokens: s.estimatedTokens,
      }));
  }

  async schedulerStatus(): Promise<SchedulerStatus> {
    if (this.down) throw new Error('fleet unreachable');
    const queuedRuns = [...this.runs.values()].filter((r) => r.status === 'queued');
    const byTenant: Record<string, number> = {};
    for (const r of queuedRuns) byTenant[r.tenant] = (byTenant[r.tenant] ?? 0) + 1;
    const lane = (p: Priority) => queuedRuns.filter((r) => r.priority === p).length;
    const inFlight = [...this.runs.values()].filter((r) => r.status === 'running').length;
    return {
      mode: this.intake === 'open' ? 'open' : inFlight > 0 ? 'draining' : 'drained',
      intake: this.intake,
      inFlight,
      queued: {
        total: queuedRuns.length,
        byPriority: { interactive: lane('interactive'), standard: lane('standard'), batch: lane('batch') },
        byTenant,
      },
      counters: { ...this.counters },
      config: structuredClone(this.config),
      governor: {
        concurrencyLimit: 80,
        tokensPerMinute: 500_000,
        throttledRecently: true,
        pausedUntil: null,
        lastThrottleAt: null,
        decreases: 2,
        increases: 5,
      },
      history: { length: 1234, continuedAsNew: 1 },
    };
  }

  async patchScheduler(patch: SettingsPatch): Promise<SchedulerStatus> {
    if (patch.concurrency !== undefined) this.config.concurrency = patch.concurrency;
    if (patch.leaseTtlSeconds !== undefined) this.config.leaseTtlSeconds = patch.leaseTtlSeconds;
    this.config.floors = { ...this.config.floors, ...patch.floors };
    return this.schedulerStatus();
  }

  async drain(intake: 'refuse' | 'hold'): Promise<SchedulerStatus> {
    this.intake = intake;
    return this.schedulerStatus();
  }

  async resume(): Promise<SchedulerStatus> {
    this.intake = 'open';
    return this.schedulerStatus();
  }

  async effectsSummary() {
    return { effects: 3, attempts: 5, duplicates: 0 };
  }

  async ready(): Promise<boolean> {
    if (this.down) throw new Error('fleet unreachable');
    return this.isReady;
  }
}

import type { EffectStore } from '../../../src/stores/effects/effect-store';
import { loadConfig } from '../../../src/config';
import type {
  AnyBatchSpec,
  BatchSpec,
  BatchView,
  DecisionOptions,
  FleetPort,
  RunListItem,
  RunListQuery,
  RunSpec,
  RunStatus,
  RunStep,
  RunView,
  StartOptions,
} from '../../../src/contract/fleet-port';
import type { AdmitNotice } from '../../../src/contract/run-messages';
import { offerRuns } from '../../../src/contract/offer-runs';
import type { OfferOptions, OfferOutcome, StartOutcome } from '../../../src/contract/offer-runs';
import { FleetScheduler } from '../../../src/scheduler';
import { submitEach } from '../../../src/workflows/scheduler-validators';
import type { SchedulerInit, SettingsPatch } from '../../../src/scheduler';
import type {
  Admission,
  ModelObservation,
  BatchVerdict,
  ReleaseOutcome,
  SchedulerStatus,
  SubmitResult,
  TenantSettings,
  UnitSubmission,
} from '../../../src/scheduler/types';

const FINISHED: RunStatus[] = ['completed', 'failed', 'cancelled'];

/** A simulated run workflow: its spec, what it would answer to a query, and the attempt it holds. */
interface RunRecord {
  spec: RunSpec;
  view: RunView;
  attempt: number;
  /** Gates the run opened, as the run workflow counts them. */
  gates?: number;
}

/**
 * The fleet in memory, deciding with the real policy core: every door answer (acceptance, shedding,
 * Retry-After), admission, ledger, explanation and fleet status comes from a `FleetScheduler`, as in
 * the scheduler workflow. Only Temporal's plumbing is simulated: run workflows are records whose state
 * moves when a test says so (`tick()` admits what the core admits, `complete()` ends a run and
 * releases its lease, `awaitApproval()` parks it at a human gate), and visibility is a filter.
 */
export class MemoryFleet implements FleetPort {
  readonly init: SchedulerInit;
  core: FleetScheduler;
  readonly records = new Map<string, RunRecord>();
  readonly batches = new Map<string, BatchSpec>();
  readonly submitCalls: UnitSubmission[][] = [];
  readonly startRunCalls: RunSpec[] = [];
  readonly upsertCalls: { tenant: string; settings: TenantSettings }[] = [];
  /** Messages the scheduler handled (stands for the workflow's history length). */
  private messages = 0;
  /** What `ready()` answers: the scheduler workflow is running. */
  isReady = true;
  /** Every gate decision sent, with what it carried. */
  readonly decisions: ({ runId: string; decision: 'approve' | 'reject' } & DecisionOptions)[] = [];
  /** Agents no worker polls (`agentServed` answers false); every other one is served. */
  readonly unserved = new Set<string>();
  /** Each `agentServed` call's agent, in order. */
  readonly servedCalls: string[] = [];
  /** When set, submit waits for it (a slow scheduler). */
  gate: Promise<void> | undefined;
  /** When set, status, tenant and readiness calls reject (Temporal is unreachable). */
  down = false;
  /** Where a batch sent in parts has its items (the batch item store, as the worker's activity reads it). */
  storedItems: ((batchId: string, indexes: number[]) => Promise<unknown[]>) | undefined;

  constructor(
    private readonly now: () => number,
    readonly effects: EffectStore,
    init?: Partial<SchedulerInit>,
  ) {
    const config = loadConfig({});
    this.init = { settings: init?.settings ?? config.fleet, governor: init?.governor ?? config.governor };
    this.core = FleetScheduler.create(this.init, now());
  }

  // ---- test controls: the Temporal side of the fleet, moved explicitly ----

  /**
   * The scheduler workflow's loop once: re-queued runs refused before offer again, expired leases'
   * runs queue again, then the core admits.
   */
  tick(): Admission[] {
    this.resubmit();
    const now = this.now();
    for (const lapsed of this.core.expireLeases(now)) {
      const r = this.records.get(lapsed.runId);
      if (r?.view.status === 'running') this.requeue(r);
    }
    const admissions = this.core.admit(now);
    for (const a of admissions) this.tell(a);
    return admissions;
  }

  /** The admission notice reaches its run, or reports it unreachable (no workflow: its start failed). */
  private tell(a: Admission): void {
    const r = this.records.get(a.runId);
    if (!r) {
      this.core.release(
        [{ runId: a.runId, attempt: a.attempt, usedTokens: 0, outcome: 'cancelled' }],
        this.now(),
      );
      return;
    }
    this.admitted(r, a);
  }

  private admitted(r: RunRecord, a: AdmitNotice): void {
    r.attempt = a.attempt;
    Object.assign(r.view, {
      status: 'running',
      admittedAt: new Date(a.admittedAt).toISOString(),
      admissionSeq: a.seq,
    });
  }

  /** A running run ends: its lease goes back to the core with the tokens it used. */
  complete(
    runId: string,
    opts: { usedTokens?: number; outcome?: Exclude<ReleaseOutcome, 'gated'> } = {},
  ): void {
    const r = this.running(runId);
    const outcome = opts.outcome ?? 'completed';
    const used = opts.usedTokens ?? r.spec.estimatedTokens;
    this.core.release([{ runId, attempt: r.attempt, usedTokens: used, outcome }], this.now());
    r.view.usage.tokens += used;
    this.finish(r, outcome);
    if (outcome === 'failed') r.view.error = { code: 'AgentStepFailed', message: 'failed in a test' };
  }

  /**
   * A running run reaches its human gate: like the run workflow, it gives its slot back first and
   * numbers the gate (`gateId`, 1 for its first). `gate` is what its view then shows of the gate (its
   * proposal, when it opened, its timeout).
   */
  awaitApproval(runId: string, usedTokens = 0, gate?: Record<string, unknown>): void {
    const r = this.running(runId);
    this.core.release([{ runId, attempt: r.attempt, usedTokens, outcome: 'gated' }], this.now());
    r.view.usage.tokens += usedTokens;
    r.view.status = 'awaiting_approval';
    r.gates = (r.gates ?? 0) + 1;
    if (gate) (r.view as { gate?: unknown }).gate = { gateId: r.gates, ...gate };
  }

  /** Worker reports of the model plane, fed to the core's governor. */
  report(observations: ModelObservation[]): void {
    this.core.observe(observations, this.now());
  }

  /** The scheduler chain was reset: a new core that knows no tenant and no unit. */
  resetScheduler(): void {
    this.core = FleetScheduler.create(this.init, this.now());
  }

  status(): SchedulerStatus {
    return { ...this.core.status(this.now()), history: { length: this.messages, continuedAsNew: 0 } };
  }

  tenantSettings(tenant: string): TenantSettings | undefined {
    return this.core.tenantStatus(tenant, this.now())?.settings;
  }

  run(runId: string): RunView | undefined {
    return this.records.get(runId)?.view;
  }

  // ---- FleetPort ----

  async submit(units: UnitSubmission[]): Promise<SubmitResult[]> {
    this.submitCalls.push(units);
    await this.gate;
    this.messages++;
    return this.coreSubmit(units);
  }

  async startRun(spec: RunSpec, opts: StartOptions = {}): Promise<StartOutcome> {
    this.startRunCalls.push(spec);
    this.startOptions.push(opts);
    const existing = this.records.get(spec.runId);
    // The workflow id is taken: the start is a no-op (a closed run is never run twice), unless a
    // failed one is re-driven (a new execution).
    const redrive = opts.redrive === true && existing?.view.status === 'failed';
    if (existing && !redrive) return FINISHED.includes(existing.view.status) ? 'finished' : 'existing';
    const r: RunRecord = { spec, view: queuedView(spec), attempt: spec.firstAttempt ?? 0 };
    this.records.set(spec.runId, r);
    // Decide, then start: the run starts with its admission, as the run workflow takes it.
    const admission = opts.start?.admission;
    if (admission && admission.attempt === r.attempt) this.admitted(r, admission);
    return 'started';
  }

  /** What each `startRun` call was started with, in order. */
  readonly startOptions: StartOptions[] = [];

  /** The real offer sequence (start, submit, discard if refused) over this fleet's simulated calls. */
  offerRuns(specs: RunSpec[], opts?: OfferOptions): Promise<OfferOutcome[]> {
    return offerRuns(this, specs, opts);
  }

  /** Runs discarded after their submission was refused. */
  readonly discarded: string[] = [];

  async discardRun(runId: string): Promise<void> {
    this.discarded.push(runId);
    this.records.delete(runId);
  }

  /** How many runs (workflows) exist. */
  get runCount(): number {
    return this.records.size;
  }

  async getRun(runId: string): Promise<RunView | null> {
    const r = this.records.get(runId);
    if (!r) return null;
    const view = structuredClone(r.view);
    if (view.status === 'queued') view.waitingOn = this.core.explain(runId, this.now());
    return view;
  }

  /**
   * Newest first, as Temporal's visibility lists them. The cursor is opaque and names the last run
   * of the page (not an offset): a run that leaves the filter between pages makes none skipped.
   */
  async listRuns(q: RunListQuery): Promise<{ items: RunListItem[]; nextCursor: string | null }> {
    const all = [...this.records.values()]
      .reverse()
      .map((r) => r.view)
      .filter(
        (r) =>
          (!q.tenant || r.tenant === q.tenant) &&
          (!q.status || r.status === q.status) &&
          (!q.priority || r.priority === q.priority) &&
          (!q.agent || r.agent === q.agent) &&
          (!q.runId || r.runId === q.runId) &&
          (!q.createdAfter || Date.parse(r.createdAt) >= Date.parse(q.createdAfter)) &&
          (!q.createdBefore || Date.parse(r.createdAt) < Date.parse(q.createdBefore)),
      );
    const after = q.cursor === undefined ? undefined : readCursor(q.cursor);
    const order = [...this.records.keys()].reverse();
    const from =
      after === undefined ? 0 : all.findIndex((r) => order.indexOf(r.runId) > order.indexOf(after));
    const page = from < 0 ? [] : all.slice(from, from + q.limit);
    const last = page.at(-1);
    const more = from >= 0 && from + q.limit < all.length;
    const items = page.map(({ runId, tenant, agent, priority, status, createdAt, batchId }) => ({
      runId,
      tenant,
      agent,
      priority,
      status,
      createdAt,
      batchId,
    }));
    return { items, nextCursor: more && last ? writeCursor(last.runId) : null };
  }

  /** The simulated runs record no history: a known run has no steps to show. */
  async runSteps(runId: string): Promise<RunStep[] | null> {
    return this.records.has(runId) ? [] : null;
  }

  async cancelRun(runId: string): Promise<boolean> {
    const r = this.records.get(runId);
    if (!r || FINISHED.includes(r.view.status)) return false;
    const now = this.now();
    if (r.view.status === 'queued') this.core.cancel([runId], now);
    if (r.view.status === 'running') {
      this.core.release([{ runId, attempt: r.attempt, usedTokens: 0, outcome: 'cancelled' }], now);
    }
    this.finish(r, 'cancelled');
    return true;
  }

  /** Either answer resumes the run, which queues again for a slot (as the run workflow's gate does). */
  async decide(runId: string, decision: 'approve' | 'reject', opts: DecisionOptions = {}): Promise<boolean> {
    const r = this.records.get(runId);
    if (r?.view.status !== 'awaiting_approval') return false;
    // As the run workflow: a decision naming another gate than the open one decides nothing.
    if (opts.gateId !== undefined && opts.gateId !== (r.gates ?? 0)) return false;
    this.decisions.push({ runId, decision, ...opts });
    this.requeue(r);
    return true;
  }

  async agentServed(agent: string): Promise<boolean> {
    this.servedCalls.push(agent);
    return !this.unserved.has(agent);
  }

  /**
   * All or nothing, decided by the core's batch check (as the scheduler workflow's `batchCheck`
   * query); then, as the batch workflow does, the runs start and their units go to the scheduler.
   */
  async createBatch(input: AnyBatchSpec): Promise<BatchVerdict> {
    const total = 'items' in input ? input.items.length : input.itemCount;
    const refusal = this.core.checkBatch(input.tenant, total, input.estimatedTokensPerItem, this.now());
    if (refusal) return { accepted: false, ...refusal };
    if (this.batches.has(input.batchId)) return { accepted: true };
    const spec: BatchSpec =
      'items' in input
        ? input
        : {
            ...input,
            items: await this.storedItems!(
              input.batchId,
              Array.from({ length: total }, (_, i) => i),
            ),
          };
    this.batches.set(spec.batchId, spec);
    const { tenant, agent, priority, batchId, createdAt } = spec;
    const specs = spec.items.map((input, i) => {
      // An item's own key, else the batch's (as the batch's activity does).
      const fairnessKey = spec.fairnessKeys?.[i] ?? spec.fairnessKey;
      const run = { tenant, agent, priority, input, estimatedTokens: spec.estimatedTokensPerItem, batchId };
      return { runId: `${batchId}-${i}`, ...run, createdAt, ...(fairnessKey ? { fairnessKey } : {}) };
    });
    await this.offerRuns(specs, { onRefused: 'keep' });
    return { accepted: true };
  }

  async getBatch(batchId: string): Promise<BatchView | null> {
    const spec = this.batches.get(batchId);
    if (!spec) return null;
    const runs = this.batchRuns(batchId).map((r) => r.view);
    const count = (...s: RunStatus[]) => runs.filter((r) => s.includes(r.status)).length;
    const total = spec.items.length;
    const running = count('running', 'awaiting_approval');
    const [completed, failed, cancelled] = [count('completed'), count('failed'), count('cancelled')];
    const queued = Math.max(0, total - running - completed - failed - cancelled);
    return { batchId, tenant: spec.tenant, total, queued, running, completed, failed, cancelled };
  }

  /** Offers the failed items again, as the Temporal fleet does: new executions, then the scheduler. */
  async resumeBatch(batchId: string): Promise<number> {
    const failed = this.batchRuns(batchId).filter((r) => r.view.status === 'failed');
    const outcomes = await this.offerRuns(
      failed.map((r) => ({ ...r.spec, firstAttempt: r.attempt + 1 })),
      { redrive: true, onRefused: 'keep' },
    );
    return outcomes.filter((o) => o.state === 'accepted').length;
  }

  async upsertTenant(tenant: string, settings: TenantSettings): Promise<void> {
    this.reachable();
    this.upsertCalls.push({ tenant, settings });
    this.messages++;
    this.core.upsertTenant(tenant, settings, this.now());
  }

  async tenantStatus(tenant: string) {
    this.reachable();
    return this.core.tenantStatus(tenant, this.now()) ?? null;
  }

  async tenantStatuses(tenants: string[]) {
    this.reachable();
    return tenants.map((t) => this.core.tenantStatus(t, this.now()) ?? null);
  }

  async ledgerEntries(tenant: string, limit: number) {
    return this.core.ledgerEntries(tenant, limit);
  }

  async schedulerStatus(): Promise<SchedulerStatus> {
    this.reachable();
    return this.status();
  }

  async patchScheduler(patch: SettingsPatch): Promise<SchedulerStatus> {
    this.messages++;
    this.core.patchSettings(patch);
    return this.status();
  }

  async drain(intake: 'refuse' | 'hold'): Promise<SchedulerStatus> {
    this.messages++;
    this.core.drain(intake, this.now());
    return this.status();
  }

  async resume(): Promise<SchedulerStatus> {
    this.messages++;
    this.core.resume(this.now());
    return this.status();
  }

  async effectsSummary() {
    return this.effects.summary();
  }

  async ready(): Promise<boolean> {
    this.reachable();
    return this.isReady;
  }

  // ---- inside ----

  private reachable(): void {
    if (this.down) throw new Error('fleet unreachable');
  }

  private running(runId: string): RunRecord {
    const r = this.records.get(runId);
    if (r?.view.status !== 'running') throw new Error(`run ${runId} is not running (${r?.view.status})`);
    return r;
  }

  private finish(r: RunRecord, status: RunStatus): void {
    this.resubmits.delete(r.spec.runId);
    Object.assign(r.view, { status, finishedAt: new Date(this.now()).toISOString(), waitingOn: null });
  }

  /**
   * As the run workflow's queueAgain (`src/workflows/run-lifecycle.ts`): a new attempt, offered for
   * what is left of its estimate but at least `atLeast`, carrying what earlier attempts used; a
   * refused offer is made again at the next `tick()`, as the workflow offers until accepted.
   */
  private requeue(r: RunRecord, atLeast = 1): void {
    r.attempt++;
    const { runId, tenant, priority, estimatedTokens } = r.spec;
    const used = r.view.usage.tokens;
    const cost = Math.max(atLeast, estimatedTokens - used, 1);
    r.view.status = 'queued';
    this.resubmits.set(runId, {
      runId,
      tenant,
      priority,
      cost,
      attempt: r.attempt,
      ...(used > 0 ? { usedTokens: used } : {}),
    });
    this.resubmit();
  }

  /** Re-queued units not yet accepted by the core (refused: offered again at each tick). */
  readonly resubmits = new Map<string, UnitSubmission>();

  /** As the scheduler workflow's submit update: a unit not in the API's forms is refused by itself. */
  private coreSubmit(units: UnitSubmission[]): SubmitResult[] {
    return submitEach(units, (good) => {
      // As the scheduler's submit handler: the round's other admissions are told as the loop tells them.
      const { results, others } = this.core.submitAdmittingNow(good, this.now());
      for (const a of others) this.tell(a);
      return results;
    });
  }

  private resubmit(): void {
    const units = [...this.resubmits.values()];
    if (units.length === 0) return;
    const results = this.coreSubmit(units);
    units.forEach((u, i) => {
      if (results[i]?.accepted) this.resubmits.delete(u.runId);
    });
  }

  private batchRuns(batchId: string): RunRecord[] {
    return [...this.records.values()].filter((r) => r.view.batchId === batchId);
  }
}

/** An opaque page token, as Temporal's nextPageToken is to its callers. */
const writeCursor = (runId: string) => Buffer.from(JSON.stringify({ after: runId })).toString('base64url');

function readCursor(cursor: string): string {
  const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { after?: unknown };
  if (typeof parsed.after !== 'string') throw new Error(`not a cursor of this fleet: ${cursor}`);
  return parsed.after;
}

function queuedView(spec: RunSpec): RunView {
  return {
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
    waitingOn: null,
    result: null,
    error: null,
    toolCalls: [],
    batchId: spec.batchId ?? null,
    fairnessKey: spec.fairnessKey ?? null,
  };
}

import type { ToolCallView } from './tool-registry';
import type { RunStart } from './admit-notice';
import type {
  LedgerEntry,
  Priority,
  SchedulerStatus,
  BatchVerdict,
  Refusal,
  SubmitResult,
  UnitSubmission,
  TenantSettings,
  TenantStatus,
  WaitingOn,
} from '../scheduler/types';
import type { SettingsPatch } from '../scheduler/fleet-settings';

/**
 * What the HTTP layer needs from the fleet. Production implements it on Temporal
 * (`src/fleet/temporal-fleet.ts`); API tests hand in `test/unit/api/memory-fleet.ts`, the real policy
 * core in memory with the Temporal side simulated.
 */
export type RunStatus = 'queued' | 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';

export type BudgetExhaustedMode = 'fail' | 'park';

export interface RunSpec {
  runId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  input: unknown;
  estimatedTokens: number;
  batchId?: string;
  /**
   * What the run does when a step needs more tokens than its tenant's budget has left: `fail` with
   * `budget_exhausted` (the default), or `park` queued (`waitingOn: budget`) until the period rolls or
   * the budget is raised. The tenant's `onBudgetExhausted` when the run was accepted.
   */
  onBudgetExhausted?: BudgetExhaustedMode;
  /**
   * The model pool that admits the run: its agent's model's (`MODELS.*.pool`), set where the run is
   * offered. Absent: the default pool.
   */
  pool?: string;
  /**
   * Who the run is for inside its tenant (an end user): the tenant's turns are shared between its
   * keys by tokens. Absent: the tenant's default key.
   */
  fairnessKey?: string;
  /** ISO timestamp of acceptance at the door. */
  createdAt: string;
  /**
   * The attempt this execution starts at (default 0). A re-driven run's new execution continues past
   * every attempt of the failed one, so no late message of that one (a release, a revoke, an
   * admission) can be taken for the new one's.
   */
  firstAttempt?: number;
}

export interface RunView {
  runId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  status: RunStatus;
  createdAt: string;
  admittedAt: string | null;
  admissionSeq: number | null;
  finishedAt: string | null;
  usage: { tokens: number };
  waitingOn: WaitingOn | null;
  result: unknown;
  error: { code: string; message: string } | null;
  batchId: string | null;
  /**
   * Who the run is for inside its tenant (its `fairnessKey`); null: the tenant's default key. The API
   * reads it from the run's memo (set at its start), so the run's own query leaves it out.
   */
  fairnessKey?: string | null;
  /** The run's tool calls (refused ones included), with the identity each acted as. */
  toolCalls: ToolCallView[];
  /** The run's human gate, once its agent opened one: what it proposes, and (once decided) who decided. */
  gate?: RunGateView;
}

/**
 * One of a run's steps as its history records it (`GET /v1/runs/:runId/steps`): a metered step, a model
 * call, or an effect, oldest first. Tool calls are the view's `toolCalls`.
 */
export interface RunStep {
  kind: 'step' | 'model' | 'effect';
  /** The step's number, the model asked for, or the effect's name. */
  name: string;
  /** Tokens it was charged (steps and model calls), null while it runs or for an effect. */
  tokens: number | null;
  outcome: 'ok' | 'failed' | 'running' | 'applied' | 'duplicate';
  /** Why it failed. */
  error?: string;
  /** When it was scheduled (ISO 8601). */
  at: string;
}

/** A run's human gate (`RunView.gate`): the proposal and its policy while it waits, then the decision. */
export interface RunGateView {
  /** The gate's sequence in the run (1 for its first gate): a decision names the gate it decides by it. */
  gateId: number;
  /** What the approver is asked to approve: the agent's proposal (JSON). */
  proposal: unknown;
  /** When the run opened the gate (ISO 8601). */
  openedAt: string;
  /** Seconds a human may take; null: the gate waits until decided or cancelled. */
  timeoutSeconds: number | null;
  /** What the gate decides when its timeout passes. */
  onTimeout: 'approve' | 'reject' | 'escalate';
  decision?: 'approve' | 'reject';
  /** Who decided: the API key id or admin token name sent with the decision; `timeout` when nobody did. */
  decidedBy?: string;
  /** When the decision was taken (ISO 8601). */
  decidedAt?: string;
  note?: string;
  /** Present when the timeout decided: `outcome` is then the policy it took. */
  timedOut?: true;
  outcome?: 'approve' | 'reject' | 'escalate';
}

export interface RunListItem {
  runId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  status: RunStatus;
  createdAt: string;
  batchId: string | null;
}

export interface RunListQuery {
  tenant?: string;
  status?: RunStatus;
  priority?: Priority;
  agent?: string;
  /** Only this run (the one an idempotency key names). */
  runId?: string;
  /** ISO 8601 bounds on when the run's workflow started: at or after, and before. */
  createdAfter?: string;
  createdBefore?: string;
  limit: number;
  cursor?: string;
}

export interface BatchSpec {
  batchId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  items: unknown[];
  estimatedTokensPerItem: number;
  /** The tenant's setting when the batch was accepted; each run carries it (see {@link RunSpec}). */
  onBudgetExhausted?: BudgetExhaustedMode;
  /** The model pool of its runs (see {@link RunSpec}); set where the batch is started. */
  pool?: string;
  /** The fairness key of the batch's runs (see {@link RunSpec}); absent: the tenant's default. */
  fairnessKey?: string;
  /** Each item's own fairness key, aligned with the items; null: the batch's `fairnessKey`. */
  fairnessKeys?: (string | null)[];
  createdAt: string;
}

/**
 * A batch whose items were sent in parts: they wait in the batch item store, and the batch's workflow
 * gets only their count (each chunk's activity reads its items by index), so no payload holds them all.
 */
export interface StoredBatchSpec extends Omit<BatchSpec, 'items'> {
  itemCount: number;
}

/** Either kind of batch the fleet starts. */
export type AnyBatchSpec = BatchSpec | StoredBatchSpec;

/** The number of items of either kind of batch. */
export const batchTotal = (spec: AnyBatchSpec): number =>
  'items' in spec ? spec.items.length : spec.itemCount;

export interface BatchView {
  batchId: string;
  tenant: string;
  total: number;
  queued: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export interface FleetPort {
  /** Offers units to the scheduler (coalesced with concurrent callers into one message). */
  submit(
    units: { runId: string; tenant: string; priority: Priority; cost: number; redrive?: boolean }[],
  ): Promise<SubmitResult[]>;
  /**
   * Starts the run's workflow, before it is submitted (so an admission always finds it); idempotent
   * on runId. `finished`: a run with this id ran before and is closed (it is never run twice).
   */
  startRun(spec: RunSpec, opts?: StartOptions): Promise<StartOutcome>;
  /** Removes a run the offer created and the scheduler refused (it never held a slot). */
  discardRun(runId: string): Promise<void>;
  /**
   * Start, submit, discard if refused: the one way a run is offered (`offerRuns` in
   * `contract/offer-runs.ts` over the three calls above). One outcome per spec, in order.
   */
  offerRuns(specs: RunSpec[], opts?: OfferOptions): Promise<OfferOutcome[]>;
  /** The run as its owner sees it, or null when there is no such run. */
  getRun(runId: string): Promise<RunView | null>;
  listRuns(query: RunListQuery): Promise<{ items: RunListItem[]; nextCursor: string | null }>;
  /** The run's steps, model calls and effects from its history (its latest execution), or null: no such run. */
  runSteps(runId: string): Promise<RunStep[] | null>;
  /** Returns false when the run is already finished. */
  cancelRun(runId: string): Promise<boolean>;
  /**
   * Answers a human gate; returns false when the run is not awaiting approval, or (`opts.gateId`)
   * its open gate is another one or already decided.
   */
  decide(runId: string, decision: 'approve' | 'reject', opts?: DecisionOptions): Promise<boolean>;
  /**
   * True when some worker polls the agent's task queue (`agentTaskQueue(base, agent)`), as Temporal
   * reports its recent pollers. False says only that none polled lately: a run submitted now still
   * waits there for a worker that starts later.
   */
  agentServed(agent: string): Promise<boolean>;

  /**
   * Creates the batch's runs (durably, in the background) after checking the whole batch fits the
   * tenant's queue and budget; a refusal changes nothing.
   */
  createBatch(spec: AnyBatchSpec): Promise<BatchVerdict>;
  getBatch(batchId: string): Promise<BatchView | null>;
  /** Re-drives the failed items; returns how many. */
  resumeBatch(batchId: string): Promise<number>;

  upsertTenant(tenant: string, settings: TenantSettings): Promise<void>;
  tenantStatus(tenant: string): Promise<TenantStatus | null>;
  /** Many tenants' status in one read (one scheduler query per TENANTS_PER_QUERY), in the order asked. */
  tenantStatuses(tenants: string[]): Promise<(TenantStatus | null)[]>;
  ledgerEntries(tenant: string, limit: number): Promise<LedgerEntry[]>;

  schedulerStatus(): Promise<SchedulerStatus>;
  patchScheduler(patch: SettingsPatch): Promise<SchedulerStatus>;
  drain(intake: 'refuse' | 'hold'): Promise<SchedulerStatus>;
  resume(): Promise<SchedulerStatus>;

  /** Effect store totals (`GET /v1/admin/effects/summary`). */
  effectsSummary(): Promise<{ effects: number; attempts: number; duplicates: number }>;

  /** True when Temporal answers and the scheduler workflow is running. */
  ready(): Promise<boolean>;
}

/** What a gate's decision carries besides approve or reject. */
export interface DecisionOptions {
  /** The gate decided (`RunGateView.gateId`); absent: whichever gate is open. */
  gateId?: number;
  note?: string;
  /** Who decided: the tenant API key's id, or `admin` for the admin token. */
  by?: string;
  /** When the API took the decision (ISO 8601). */
  at?: string;
}

/**
 * `started`: this call created the run's workflow; `existing`: it was already running (an earlier
 * offer started it, and the scheduler may know it or still hear of it); `finished`: it ran before and
 * is closed.
 */
export type StartOutcome = 'started' | 'existing' | 'finished';

/** `redrive`: a failed run started afresh; `start`: what the run starts with (decide, then start). */
export interface StartOptions {
  redrive?: boolean;
  start?: RunStart;
  /** Its unit waits in the scheduler's queue (decide, then start): the run waits for its admission's notice. */
  queued?: boolean;
}

/** The three moves of offering a run, as the fleet (or a test's fleet) makes them. */
export interface RunOfferPorts {
  /** Starts the run's workflow, idempotent on its id; `redrive` starts a failed one afresh. */
  startRun(spec: RunSpec, opts?: StartOptions): Promise<StartOutcome>;
  /** Offers units to the scheduler; one result per unit. */
  submit(units: UnitSubmission[]): Promise<SubmitResult[]>;
  /** Removes a run this offer created and the scheduler refused (it never heard of it otherwise). */
  discardRun(runId: string): Promise<void>;
}

export interface OfferOptions {
  /** A failed run started again on purpose (batch resume): a new execution, and the core forgets it ended. */
  redrive?: boolean;
  /**
   * What becomes of a refused run's workflow: `discard` (default; a refused request leaves nothing
   * behind) or `keep` (it was accepted before, e.g. a batch item: it offers itself again later).
   */
  onRefused?: 'discard' | 'keep';
  /**
   * Called once per tenant the scheduler does not know (`unknown_tenant`: it restarted without the
   * tenant); the tenant's runs are then offered once more.
   */
  resync?: (tenant: string) => Promise<void>;
  /** Workflow starts in flight at once. */
  concurrency?: number;
  /**
   * Decide, then start (RUN_START_ORDER=decide-first): submit first and start each run the scheduler
   * admitted at once with its admission; the rest are offered the usual way. Only for new runs whose
   * refusal discards them (not with `redrive` or `onRefused: 'keep'`).
   */
  decideFirst?: boolean;
}

export type OfferOutcome =
  | { runId: string; state: 'finished' }
  | { runId: string; state: 'accepted'; duplicate: boolean; held: boolean }
  | { runId: string; state: 'refused'; refusal: Refusal };

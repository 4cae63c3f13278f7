import type { BudgetExhaustedMode } from './fleet-port';
import type { AdmitNotice } from './run-messages';
import type { RecoveredUsage, RecoveryFigures, WorkerReport } from './scheduler-messages';
import type { Priority, Release, SubmitResult, TopUpResult } from '../scheduler/types';
import type { ModelCompletion, ModelDialect, ModelRequest } from './chat-model';

/**
 * What a waiting run learns when it checks on the scheduler: `known` (queued or admitted: keep
 * waiting), `queued` (it did not know the run; now it does), `ended` (that attempt ended: ask with the
 * next one), `refused` (re-offer after `retryAfterSeconds`), `unavailable` (no scheduler answered).
 */
export interface OfferResult {
  state: 'known' | 'queued' | 'ended' | 'refused' | 'unavailable';
  retryAfterSeconds: number;
  /** Why it was refused (`refused` only), with the door's message. */
  code?: string;
  message?: string;
}

/** Activity signatures, the only thing workflow code imports from here (types only). */
export interface StepRequest {
  /** The run's tenant: the provider bills the call to it. Looked up from the run when absent (older workflows). */
  tenant?: string;
  runId: string;
  attempt: number;
  step: number;
  tokens: number;
  /** Who the run is (renewals carry it, with `tenant`, so a scheduler that lost the lease takes the run back). */
  priority?: Priority;
  cost?: number;
  /** The model pool it was admitted in: an adopted lease counts there. */
  pool?: string;
  /** The step lasts at least this long (the synthetic agent's `stepMs`). */
  minMs: number;
  usedSoFar: number;
  /** The step fails for good after using its tokens. */
  fail?: boolean;
  /** The lease's length: a long step renews it at a third of this. */
  leaseTtlMs: number;
}

/** One agent model call (`ctx.model`): the request, and whose call it is. */
export interface ModelCallRequest {
  /** The run's tenant: the provider bills the call to it. Looked up from the run when absent. */
  tenant?: string;
  runId: string;
  attempt: number;
  /**
   * The call's index in the run, unique among its steps and calls (with the run id, the call key the
   * provider's log tells calls apart by; the same on every retry).
   */
  step: number;
  priority?: Priority;
  cost?: number;
  pool?: string;
  /** Tokens the attempt used before this call (renewals carry the running total). */
  usedSoFar: number;
  /** The lease's length: a long call renews it at a third of this. */
  leaseTtlMs: number;
  request: ModelRequest;
  /**
   * What the run reserved for this call (`measureModelCall`'s `worstCaseTokens`). A call whose worst
   * case is larger is refused (`ModelReservationShort`) before it goes: `spent <= budget` holds.
   */
  reserved?: number;
}

/** A call's reservation, measured with the tokenizer outside the workflow sandbox. */
export interface ModelCallMeasure {
  /** The configured model that will serve it, and its dialect. */
  model: string;
  dialect: ModelDialect;
  /** The prompt's bound in that dialect's tokens. */
  promptTokens: number;
  /** The most the call can be billed: `promptTokens + maxTokens`. */
  worstCaseTokens: number;
}

export interface ModelCallResult {
  completion: ModelCompletion;
  /** The call's worst case, as it was recorded before the call (and charged if its outcome is unknown). */
  reservedTokens: number;
}

export interface BatchChunk {
  batchId: string;
  tenant: string;
  agent: string;
  priority: Priority;
  /** The items, when the batch carried them; absent: the activity reads them from the batch item store. */
  items?: unknown[];
  /** Each item's index in the whole batch (its run id is `<batchId>-<index>`). */
  indexes: number[];
  estimatedTokensPerItem: number;
  onBudgetExhausted?: BudgetExhaustedMode;
  pool?: string;
  /** The batch's fairness key: every run's that `fairnessKeys` does not name. */
  fairnessKey?: string;
  /** Each item's own fairness key, aligned with `indexes`; null: `fairnessKey`. */
  fairnessKeys?: (string | null)[];
  createdAt: string;
}

export interface AgentEffectRequest {
  /** `<runId>:<name>`: one delivery per run and name. */
  key: string;
  runId: string;
  tenant: string;
  agent: string;
  name: string;
  args: Record<string, unknown>;
}

export interface AgentEffectResult {
  applied: boolean;
  /** What the effect function returned (JSON), from its one delivery. */
  result?: unknown;
}

/** The scheduler's pull of worker reports from the report log (`REPORTS=pull`). */
export interface ReportPull {
  schedulerId: string;
  /** The cursor of the last report the scheduler booked; null for a chain without one (it begins where the log was last acknowledged). */
  after: number | null;
}

export interface PulledReports {
  reports: WorkerReport[];
  /** The cursor to pass with the next pull, once these reports are booked. */
  after: number;
}

export interface FleetActivities {
  /** Tells many runs they were admitted; returns those whose workflow could not be reached. */
  notifyAdmissions(
    notices: { runId: string; notice: AdmitNotice }[],
  ): Promise<{ runId: string; attempt: number }[]>;
  notifyRevoked(revoked: { runId: string; attempt: number }[]): Promise<void>;
  /** Tells queued runs their tenant's budget can no longer cover them (they fail `budget_exhausted`). */
  notifyBudgetRefused(refused: { runId: string; attempt: number; message: string }[]): Promise<void>;
  /** One model call through the model plane; renews the run's lease as it goes. */
  modelStep(req: StepRequest): Promise<{ usedTokens: number }>;
  /** The reservation of an agent model call: its worst case, counted with the tokenizer. */
  measureModelCall(request: ModelRequest): Promise<ModelCallMeasure>;
  /**
   * One agent model call through the configured model's dialect, recorded and charged as a step's
   * call is (its worst case when its outcome is unknown); renews the run's lease as it goes.
   */
  modelCall(req: ModelCallRequest): Promise<ModelCallResult>;
  /** Applies the run's effect once per key, however often it is attempted. */
  applyEffect(req: { key: string; runId: string }): Promise<{ applied: boolean }>;
  /**
   * Runs the worker's effect function `name` (startWorker's `effects`) once per key, however often
   * it is attempted and across worker crashes; the later attempts answer `applied: false` with the
   * first delivery's result.
   */
  applyAgentEffect(req: AgentEffectRequest): Promise<AgentEffectResult>;
  /**
   * Returns the slot through the worker's batched mailbox. The tokens were charged call by call as the
   * provider billed them, so the release settles none of its own.
   */
  releaseLease(release: Release): Promise<void>;
  /** Asks the scheduler for `tokens` more reservation for the run's current attempt (granted within budget). */
  requestTopUp(req: { runId: string; attempt: number; tokens: number }): Promise<TopUpResult>;
  /** Tells the scheduler a queued run was cancelled (batched with other reports). */
  cancelQueued(runId: string): Promise<void>;
  /** Queues the run again (after its lease was revoked, or after a human gate). */
  resubmit(unit: {
    runId: string;
    tenant: string;
    priority: Priority;
    cost: number;
    attempt: number;
    usedTokens?: number;
    fairnessKey?: string;
  }): Promise<SubmitResult>;
  /** A waiting run checks that the scheduler knows it, and re-offers itself when not (batched per worker). */
  offerRun(unit: {
    runId: string;
    tenant: string;
    priority: Priority;
    cost: number;
    attempt: number;
    usedTokens?: number;
    pool?: string;
    fairnessKey?: string;
  }): Promise<OfferResult>;
  /**
   * Acknowledges `req.after` and answers the worker reports logged past it (waiting a little for the
   * first): the scheduler's one path for reports whatever the number of workers.
   */
  pullReports(req: ReportPull): Promise<PulledReports>;
  /** Usage of the runs that finished in each tenant's period (visibility), for a recovering scheduler. */
  recoverUsage(
    windows: { tenant: string; periodStart: number }[],
  ): Promise<RecoveredUsage[] | RecoveryFigures>;
  /** Creates one chunk of a batch's runs; returns how many it created and the items still refused. */
  startBatchChunk(
    chunk: BatchChunk,
  ): Promise<{ started: number; refused: { index: number; retryAfterSeconds: number }[] }>;
  /** Forgets a stored batch's items once every item's run exists (the runs carry their own input). */
  releaseBatchItems(batchId: string): Promise<void>;
}

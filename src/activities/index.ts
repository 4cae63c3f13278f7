import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import { estimateTokens } from '../agents/catalog';
import { stepWorstCase } from '../contract/model-call';
import { offerRuns } from '../contract/offer-runs';
import type { RunOfferPorts } from '../contract/offer-runs';
import { mapLimit } from '../util/map-limit';
import { admitSignal, budgetRefusedSignal, leaseRevokedSignal } from '../contract/run-messages';
import { submitUpdate, topUpUpdate, topUpsUpdate, upsertTenantsUpdate } from '../contract/scheduler-messages';
import { schedulerUpdates } from './scheduler-updates';
import type { PermitGate } from './scheduler-updates';
import type { TopUpRequest } from '../contract/scheduler-messages';
import type { TenantSettings, UnitSubmission } from '../scheduler/types';
import type { RecoveredUsage } from '../contract/scheduler-messages';
import { noticesWithGrace } from './admit-notices';
import { signalRun } from './wake-run';
import { deliverOnce } from './deliver-once';
import type { BatchItemStore } from '../stores/batch-items/batch-items';
import type { CallCharges } from './call-charges';
import { chargedCall } from './charged-call';
import type { ChatClient } from './chat-client';
import { modelCallActivities } from './model-call';
import type { EffectStore } from '../stores/effects/effect-store';
import { noUpdateHandler, renewalGapMs, renewalOf } from './mailbox';
import type { SchedulerMailbox } from './mailbox';
import { clientTimeoutMs } from './model-client';
import type { ModelClient } from './model-client';
import { OfferBatcher } from './offer-batcher';
import { Coalescer } from './submit-coalescer';
import { reportPull } from './report-pull';
import type { ReportLog } from '../stores/report-log/report-log';
import { agentEffectActivity } from './agent-effects';
import type { EffectFunction } from './agent-effects';
import { tenantLookup } from './tenant-of';
import type { BatchChunk, FleetActivities } from '../contract/activity-types';

export interface ActivityDeps {
  client: Client;
  /** Starts a run's workflow (idempotent); `finished`: it ran before and is closed. */
  startRun: RunOfferPorts['startRun'];
  /** Removes a run its offer created and the scheduler refused. */
  discardRun: RunOfferPorts['discardRun'];
  /** Usage of runs finished in each tenant's period (visibility), for a recovering scheduler. */
  recoverUsage: (
    windows: { tenant: string; periodStart: number }[],
  ) => Promise<{ usage: RecoveredUsage[]; activeRuns: number; scanned: number; truncated: boolean }>;
  schedulerId: string;
  mailbox: SchedulerMailbox;
  /** The log worker reports are appended to and the scheduler pulls (`pullReports`); a worker without it answers no pull. */
  reports?: ReportLog;
  /** How long a pull waits for a first report (REPORT_PULL_WAIT_MS). */
  reportPullWaitMs?: number;
  /** True once this worker stops: a pull waiting for reports answers at once. */
  stopping?: () => boolean;
  /** Every model call's durable intent and charge (see {@link CallCharges}); a worker without it makes no model call. */
  calls?: Pick<CallCharges, 'begin' | 'billed' | 'unbilled' | 'uncertain' | 'earlier'>;
  model: ModelClient;
  /** Agents' own model calls (`modelCall`), per configured model; a worker without it makes none. */
  chat?: ChatClient;
  effects: EffectStore;
  /** The user's effect functions by name (startWorker's `effects`): what `applyAgentEffect` runs. */
  agentEffects?: Readonly<Record<string, EffectFunction>>;
  /** Where an applied effect is delivered (the effect sink); undefined: the store's row is the effect. */
  effectSinkUrl?: string | undefined;
  /**
   * A tenant's settings from the tenant store (undefined: no such tenant). A run whose tenant the
   * scheduler does not know sends them again before it offers itself once more: never the run's own
   * copy, which may be stale. Without it such a run waits until the API re-syncs its tenants.
   */
  tenantSettings?: (tenant: string) => Promise<TenantSettings | undefined>;
  /**
   * The fleet's permits for the scheduler updates workers send (WORKER_UPDATE_PERMITS): every update
   * below holds one. Without it (a unit test's worker) they go unbounded.
   */
  updatePermits?: PermitGate;
  /** Where the items of batches sent in parts wait (read by index, forgotten once their runs exist). */
  batchItems?: Pick<BatchItemStore, 'readItems' | 'dropItems'>;
  log: Logger;
}

/** A coalesced resubmit or top-up waits at most this long for the scheduler (its activity then retries). */
const COALESCED_TIMEOUT_MS = 60_000;

/** Builds the activities from their dependencies: production hands in real ones, tests their own. */
export function createActivities(deps: ActivityDeps): FleetActivities {
  const { client, mailbox, model, effects } = deps;
  const update = schedulerUpdates(client, deps.schedulerId, deps.updatePermits);
  const tenantOf = tenantLookup(client);
  /** Sends the tenant's stored settings to the scheduler; false when the store has no such tenant. */
  const resyncTenant = async (tenant: string, signal?: AbortSignal): Promise<boolean> => {
    const settings = await deps.tenantSettings?.(tenant);
    if (!settings) return false;
    deps.log.info({ tenant }, 'scheduler did not know the tenant; re-syncing it from the tenant store');
    await update(upsertTenantsUpdate, [[{ tenant, settings }]], signal ? { signal } : {});
    return true;
  };
  const offers = new OfferBatcher(client, deps.schedulerId, update, deps.log, resyncTenant);
  /**
   * The runs of this worker share one scheduler update per linger (the scheduler takes at most 10
   * updates in flight); one that does not come back within the bound fails its runs' calls, which
   * their activities retry.
   */
  const coalesced = <T, R>(send: (items: T[]) => Promise<R[]>) =>
    new Coalescer<T, R>(send, { lingerMs: 15, maxUnits: 1000, maxInFlight: 2 });
  const bounded = { timeoutMs: COALESCED_TIMEOUT_MS };
  const resubmits = coalesced((units: UnitSubmission[]) => update(submitUpdate, [units], bounded));
  /** `topUps`; one by one to an older scheduler without its handler. */
  const topUps = coalesced(async (reqs: TopUpRequest[]) => {
    try {
      return await update(topUpsUpdate, [reqs], bounded);
    } catch (err) {
      if (!noUpdateHandler(err)) throw err;
      return Promise.all(reqs.map((r) => update(topUpUpdate, [r], bounded)));
    }
  });
  /**
   * A scheduler update waits for the scheduler's workflow task, which a stopping worker no longer
   * polls for: such a call ends when its activity is cancelled (the shutdown grace is over), or the
   * worker could never finish draining.
   */
  /** The batch item store; a worker without one cannot run a batch sent in parts (retried until it has). */
  const storedItems = () => {
    if (deps.batchItems) return deps.batchItems;
    throw new Error(
      'this worker has no batch item store (it cannot read the items of a batch sent in parts)',
    );
  };
  /** The call ledger; a worker without one cannot charge a call durably, so it makes none (retried until it can). */
  const callLedger = () => {
    if (deps.calls) return deps.calls;
    throw new Error('this worker has no call intent store (it cannot charge a model call durably)');
  };

  /** Signals a running run (a revoked lease's: never in a start delay); false when it is gone. */
  async function signalPlain(
    runId: string,
    send: (h: ReturnType<Client['workflow']['getHandle']>) => Promise<void>,
  ): Promise<boolean> {
    try {
      await send(client.workflow.getHandle(runId));
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  return {
    // A queued run may wait out a start delay (wake-run.ts), or not be started yet ({@link noticesWithGrace}).
    async notifyAdmissions(notices) {
      const unreachable = await noticesWithGrace(notices, (n) =>
        signalRun(client, n.runId, admitSignal, n.notice),
      );
      return unreachable.map((n) => ({ runId: n.runId, attempt: n.notice.attempt }));
    },

    async notifyRevoked(revoked) {
      await mapLimit(revoked, 32, (r) =>
        signalPlain(r.runId, (h) => h.signal(leaseRevokedSignal, { attempt: r.attempt })),
      );
    },

    async notifyBudgetRefused(refused) {
      await mapLimit(refused, 32, (r) =>
        signalRun(client, r.runId, budgetRefusedSignal, { attempt: r.attempt, message: r.message }),
      );
    },

    async modelStep(req) {
      const ctx = Context.current();
      const started = Date.now();
      // Renewals say who the run is, so a scheduler that lost its lease takes it back (recovery).
      const lease = { runId: req.runId, attempt: req.attempt, perCall: true };
      const who = renewalOf(req);
      const renew = (usedTokens: number) => mailbox.renew({ ...who, usedTokens }, renewalGapMs(req));
      renew(req.usedSoFar);
      const every = Math.max(200, Math.min(req.leaseTtlMs / 3, 10_000));
      // A retried regular step whose earlier attempt was billed (its heartbeat says so: a worker died
      // after the call) does not call again. Nor does it charge: that attempt's call intent is charged
      // once, by its worker's mailbox or, that worker being dead, by another worker's sweep.
      const billed = (ctx.info.heartbeatDetails as { billedTokens?: unknown } | undefined)?.billedTokens;
      let usedTokens: number;
      if (!ctx.info.isLocal && typeof billed === 'number' && billed >= 0) usedTokens = billed;
      else {
        const tenant = req.tenant ?? (await tenantOf(req.runId));
        if (tenant === undefined)
          deps.log.warn({ runId: req.runId }, 'run without a tenant: its call goes unbilled');
        // Every call the provider bills is charged, retried or parallel, whether or not the lease still
        // holds, and whether or not this worker lives to report it (the intent is durable first).
        const call = tenant === undefined ? undefined : { ...lease, tenant };
        const reserved = stepWorstCase(req.runId, req.step, req.tokens);
        const ledger = callLedger();
        // A step's call goes once: a re-run (a local step whose workflow task's completion was lost,
        // a retry after a cut call) that finds an earlier call of its key recorded answers what that
        // call cost (known, or charged at its worst case) and neither calls nor charges again.
        const earlier =
          call && (await ledger.earlier({ runId: req.runId, attempt: req.attempt, step: req.step }));
        if (earlier) {
          deps.log.info(
            {
              runId: req.runId,
              step: req.step,
              key: earlier.key,
              tokens: earlier.tokens,
              known: earlier.known,
            },
            'model step already called: not calling again',
          );
          usedTokens = earlier.tokens;
        } else {
          // A call the provider holds (a gateway queueing it) keeps the lease, and a longer step its heartbeat.
          const beat = setInterval(() => {
            renew(req.usedSoFar);
            if (!ctx.info.isLocal) ctx.heartbeat();
          }, every);
          try {
            ({ billed: usedTokens } = await chargedCall(ledger, call, req.step, reserved, async (callId) => {
              const r = await model.complete({
                tenant,
                runId: req.runId,
                step: req.step,
                callId,
                tokens: req.tokens,
                signal: ctx.cancellationSignal,
                timeoutMs: clientTimeoutMs(ctx.info.startToCloseTimeoutMs),
                attempt: ctx.info.attempt,
              });
              return { result: r, billed: r.usedTokens };
            }));
          } finally {
            clearInterval(beat);
          }
        }
        if (!ctx.info.isLocal) ctx.heartbeat({ billedTokens: usedTokens });
      }
      renew(req.usedSoFar + usedTokens);
      // Hold the step to its minimum length, heartbeating and renewing the lease meanwhile.
      for (
        let left = req.minMs - (Date.now() - started);
        left > 0;
        left = req.minMs - (Date.now() - started)
      ) {
        await ctx.sleep(Math.min(left, every));
        if (!ctx.info.isLocal) ctx.heartbeat({ billedTokens: usedTokens });
        renew(req.usedSoFar + usedTokens);
      }
      if (req.fail) {
        throw ApplicationFailure.create({
          type: 'AgentStepFailed',
          message: `step ${req.step} failed (failAtStep)`,
          nonRetryable: true,
          // Asked for by the run's input: the SDK logs it at DEBUG, not as a worker's warning.
          category: ApplicationFailureCategory.BENIGN,
          details: [{ usedTokens }],
        });
      }
      return { usedTokens };
    },

    ...modelCallActivities({
      chat: () => {
        if (deps.chat) return deps.chat;
        throw new Error('this worker has no model endpoints (it cannot make an agent model call)');
      },
      calls: callLedger,
      mailbox,
      tenantOf,
      log: deps.log,
    }),

    async applyEffect(req) {
      const state = await effects.apply(req.key, { runId: req.runId });
      // The store guards the delivery: a key it has seen delivered is not sent again, and one a crashed
      // attempt may have sent is looked up at the sink first (see deliverOnce).
      if (deps.effectSinkUrl) await deliverOnce(effects, deps.effectSinkUrl, req.key, state);
      return { applied: state.applied };
    },

    // A worker started without effect functions refuses every name (UnknownEffect, for good).
    // Heartbeats say this worker is alive: an effect whose worker died is retried after the run's
    // heartbeat timeout (it finds its delivery recorded, or runs again marked as a redelivery), not
    // after its 5-minute start-to-close timeout.
    applyAgentEffect: beating(agentEffectActivity(effects, deps.agentEffects ?? {})),

    async releaseLease(release) {
      await mailbox.release({ ...release, perCall: true });
    },

    async requestTopUp(req) {
      const [r] = await untilCancelled(topUps.submit([req]), Context.current().cancellationSignal);
      if (!r) throw new Error('scheduler answered no top-up');
      return r;
    },

    async cancelQueued(runId) {
      await mailbox.cancel(runId);
    },

    async resubmit(unit) {
      const send = async () => {
        const signal = Context.current().cancellationSignal;
        const [r] = await untilCancelled(resubmits.submit([unit]), signal);
        if (!r) throw new Error('scheduler answered no result');
        return r;
      };
      const result = await send();
      if (
        !result.accepted &&
        result.code === 'unknown_tenant' &&
        (await resyncTenant(unit.tenant, Context.current().cancellationSignal))
      )
        return send();
      return result;
    },

    offerRun: (unit) => untilCancelled(offers.offer(unit), Context.current().cancellationSignal),

    pullReports: reportPull(deps.reports, {
      waitMs: deps.reportPullWaitMs ?? 1000,
      beat: () => Context.current().heartbeat(),
      ...(deps.stopping ? { stopping: deps.stopping } : {}),
    }),

    async recoverUsage(windows) {
      const r = await deps.recoverUsage(windows);
      deps.log.warn(
        { tenants: r.usage.length, activeRuns: r.activeRuns, scanned: r.scanned, truncated: r.truncated },
        'recovered tenant usage from finished runs',
      );
      // A truncated scan is no proof of anything: without `activeRuns` the hold keeps its window.
      return r.truncated ? r.usage : { usage: r.usage, activeRuns: r.activeRuns };
    },

    // Heartbeats say this worker is alive: a chunk whose worker died is retried after the
    // workflow's heartbeat timeout, not its 5-minute start-to-close timeout.
    startBatchChunk: beating(startChunk),

    async releaseBatchItems(batchId) {
      await storedItems().dropItems(batchId);
    },
  };

  async function startChunk(chunk: Parameters<FleetActivities['startBatchChunk']>[0]) {
    const items = chunk.items ?? (await storedItems().readItems(chunk.batchId, chunk.indexes));
    const specs = chunk.indexes.map((index, i) => ({
      runId: `${chunk.batchId}-${index}`,
      tenant: chunk.tenant,
      agent: chunk.agent,
      priority: chunk.priority,
      input: items[i],
      // Never below the agent's own estimate for this item (the batch's figure is a mean).
      estimatedTokens: Math.max(chunk.estimatedTokensPerItem, itemEstimate(chunk.agent, items[i])),
      batchId: chunk.batchId,
      ...(chunk.onBudgetExhausted ? { onBudgetExhausted: chunk.onBudgetExhausted } : {}),
      ...(chunk.pool ? { pool: chunk.pool } : {}),
      ...itemKey(chunk, i),
      createdAt: chunk.createdAt,
    }));
    // The one offer sequence (runs first, then the scheduler; a run that already finished, from a
    // retried chunk, is not offered again). A refused item stays started: the batch offers it again.
    const ports: RunOfferPorts = {
      startRun: deps.startRun,
      discardRun: deps.discardRun,
      submit: (units) => update(submitUpdate, [units], { signal: Context.current().cancellationSignal }),
    };
    const outcomes = await offerRuns(ports, specs, { onRefused: 'keep', concurrency: 32 });
    const refused = outcomes.flatMap((o, i) =>
      o.state === 'refused'
        ? [{ index: chunk.indexes[i]!, retryAfterSeconds: o.refusal.retryAfterSeconds }]
        : [],
    );
    return { started: specs.length, refused };
  }
}

/** How often a long activity says its worker is alive (the workflows' heartbeat timeouts are 30 s). */
const ALIVE_HEARTBEAT_MS = 5000;

/** `fn` as an activity that heartbeats every ALIVE_HEARTBEAT_MS while it runs. */
function beating<A, R>(fn: (arg: A) => Promise<R>): (arg: A) => Promise<R> {
  return async (arg) => {
    const ctx = Context.current();
    const beat = setInterval(() => ctx.heartbeat(), ALIVE_HEARTBEAT_MS);
    try {
      return await fn(arg);
    } finally {
      clearInterval(beat);
    }
  };
}

/** `p`, or a CancelledFailure once `signal` aborts (a shared call this activity no longer waits for). */
function untilCancelled<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new CancelledFailure('activity cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CancelledFailure('activity cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The fairness key of a chunk's `i`-th run: its item's own, else the batch's, else none. */
function itemKey(chunk: BatchChunk, i: number): { fairnessKey?: string } {
  const key = chunk.fairnessKeys?.[i] ?? chunk.fairnessKey;
  return key ? { fairnessKey: key } : {};
}

/** The agent's estimate for one batch item (0 when it cannot tell: the batch's figure then stands). */
function itemEstimate(agent: string, item: unknown): number {
  try {
    return estimateTokens(agent, item);
  } catch {
    return 0;
  }
}

import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { FleetActivities } from '../activities/types';
import { DEFAULT_GOVERNOR, DEFAULT_INTERACTIVE_RESERVE, FleetScheduler } from '../scheduler';
import type { SchedulerSnapshot } from '../scheduler';
import type { Admission, FleetSettings, GovernorParams, SchedulerStatus } from '../scheduler/types';
import {
  batchCheckQuery,
  drainSignal,
  drainUpdate,
  explainQuery,
  knowsQuery,
  ledgerQuery,
  patchSettingsUpdate,
  recoverSignal,
  recoveryFigures,
  reportSignal,
  reportUpdate,
  resumeSignal,
  resumeUpdate,
  statusQuery,
  submitUpdate,
  tenantQuery,
  tenantsQuery,
  topUpUpdate,
  upsertTenantsUpdate,
} from './scheduler-messages';
import { applyReport, reportsOnce, summaryLine } from './scheduler-support';
import {
  validateDrain,
  validateSettingsPatch,
  submitEach,
  validateSubmissions,
  validateUpsertTenants,
} from './scheduler-validators';

export interface SchedulerInput {
  settings: FleetSettings;
  governor?: GovernorParams;
  snapshot?: SchedulerSnapshot;
  continuedAsNew?: number;
  /** Continue-as-new after this many history events even before the server suggests it (tests, drills). */
  maxHistoryEvents?: number;
}

const { recoverUsage } = proxyActivities<FleetActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 5 },
});

const { notifyAdmissions, notifyRevoked, notifyBudgetRefused } = proxyActivities<FleetActivities>({
  // A few hundred idempotent signals take a second; a worker killed mid-notice must not leave its
  // runs unaware of their admission until their leases expire, so the retry comes quickly.
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
});

/** Admission notices per activity: one activity tells many runs (a few events per batch, not per run). */
const NOTICE_BATCH = 250;

/**
 * After a recovery begins, the usage floor is taken again at these multiples of the lease TTL (at
 * least 10 s), on the scheduler's own timers: runs in flight when the chain was lost had part of their
 * usage in the lost ledger, and visibility shows it only once they have closed.
 */
export const RECOVERY_FOLLOW_UPS = [1, 2, 4, 8, 16] as const;

/**
 * The fleet's one long-lived scheduler: owns admission, fairness, the governor, the ledger and the
 * drain switch (all in the pure core), and continues-as-new with its compact state to run for months.
 */
export async function schedulerWorkflow(input: SchedulerInput): Promise<void> {
  const core = input.snapshot
    ? FleetScheduler.restore(input.snapshot)
    : FleetScheduler.create(
        { settings: input.settings, governor: input.governor ?? DEFAULT_GOVERNOR },
        Date.now(),
      );
  const continuedAsNew = input.continuedAsNew ?? 0;
  // Settings without an interactive reserve take the default.
  const chainSettings = input.snapshot?.settings ?? input.settings;
  if (chainSettings.interactiveReserve === undefined)
    core.patchSettings({ interactiveReserve: DEFAULT_INTERACTIVE_RESERVE });
  let dirty = true;
  let pending = 0;

  // A chain that may be behind (started without a snapshot, i.e. after a loss or for the first time,
  // or reset: its run id is no longer the one its start event recorded) holds budgeted tenants'
  // admissions until a usage floor it asks for itself has landed, takes the floor again on its own
  // timers, and ends queued units a budget can no longer cover (budget_exhausted). A floor that found
  // no run open past admission is taken again at once while a tenant is still held.
  let recoverRequested = false;
  let floorInFlight = false;
  const armFollowUps = (since: number): void => {
    const step = Math.max(10, core.leaseTtlSeconds()) * 1000;
    // The floor that lifts the hold comes right after the hold window; the follow-ups after it.
    const ats = [since + core.recoveryHoldMs() + 1, ...RECOVERY_FOLLOW_UPS.map((k) => since + k * step)];
    for (const at of ats.filter((x) => x > Date.now()).sort((a, b) => a - b))
      void sleep(at - Date.now()).then(() => {
        recoverRequested = true;
        dirty = true;
      });
  };
  /** A held tenant waits for a floor and the hold window is over (before it, a floor lifts no hold). */
  const floorDue = (): boolean => {
    const since = core.recoverySince();
    return since !== null && Date.now() > since + core.recoveryHoldMs() && core.needsFloor();
  };
  const startRecovery = (): void => {
    if (core.recoverySince() === null) {
      const now = Date.now();
      core.beginRecovery(now);
      armFollowUps(now);
    }
    recoverRequested = true;
    dirty = true;
  };
  {
    const info = workflowInfo();
    const since = core.recoverySince();
    if (!input.snapshot || info.runId !== info.originalExecutionRunId) startRecovery();
    else if (since !== null) {
      // Continued-as-new while recovering: every tenant is held again until the next floor.
      recoverRequested = true;
      armFollowUps(since);
    }
  }

  const status = (): SchedulerStatus => ({
    ...core.status(Date.now()),
    history: { length: workflowInfo().historyLength, continuedAsNew },
  });
  const touched = <T>(value: T): T => {
    dirty = true;
    return value;
  };

  // Handlers first, before any await, so no buffered message is dropped.
  // Malformed units are refused one by one (their neighbours in the message are not affected).
  setHandler(submitUpdate, (units) => touched(submitEach(units, (good) => core.submit(good, Date.now()))), {
    validator: validateSubmissions,
  });
  setHandler(topUpUpdate, (req) => touched(core.topUp(req.runId, req.attempt, req.tokens, Date.now())), {
    validator: (req) => {
      if (typeof req?.runId !== 'string' || !Number.isFinite(req.attempt) || !Number.isFinite(req.tokens))
        throw new TypeError('topUp expects { runId, attempt, tokens }');
    },
  });
  setHandler(
    upsertTenantsUpdate,
    (list) => {
      for (const t of list) {
        if (!core.upsertTenant(t.tenant, t.settings, Date.now()))
          log.warn('scheduler holds its maximum of busy tenants; tenant not added yet', { tenant: t.tenant });
      }
      // A tenant that appeared while recovering is held: it needs a floor of its own.
      if (floorDue()) recoverRequested = true;
      dirty = true;
    },
    { validator: validateUpsertTenants },
  );
  setHandler(
    patchSettingsUpdate,
    (patch) => {
      core.patchSettings(patch);
      return touched(status());
    },
    { validator: validateSettingsPatch },
  );
  setHandler(
    drainUpdate,
    (arg) => {
      core.drain(arg?.intake ?? 'refuse', Date.now());
      return touched(status());
    },
    { validator: validateDrain },
  );
  setHandler(
    resumeUpdate,
    () => {
      core.resume(Date.now());
      return touched(status());
    },
    { validator: () => undefined },
  );
  // Signal handlers never throw: a malformed message is logged and dropped, never fails the scheduler.
  // Reports come as updates (the mailbox's way) or as signals (from a stopping worker, whose updates
  // no longer find a workflow worker of its own): the same report may arrive both ways, or twice, and
  // is applied once in this run. Neither handler throws.
  const onReport = reportsOnce((report) => {
    dirty = applyReport(core, report, Date.now()) || dirty;
  });
  setHandler(reportSignal, onReport);
  setHandler(reportUpdate, onReport);
  setHandler(drainSignal, (arg) => {
    const intake = (arg as { intake?: unknown } | null | undefined)?.intake === 'hold' ? 'hold' : 'refuse';
    core.drain(intake, Date.now());
    dirty = true;
  });
  setHandler(resumeSignal, () => {
    core.resume(Date.now());
    dirty = true;
  });
  // The watchdog's: a new or reset chain (hold and floor), or a follow-up (floor only).
  setHandler(recoverSignal, (arg) => {
    const followUp = (arg as { followUp?: unknown } | null | undefined)?.followUp === true;
    if (!followUp) startRecovery();
    recoverRequested = true;
    dirty = true;
  });
  setHandler(statusQuery, status);
  setHandler(knowsQuery, (runIds) => (Array.isArray(runIds) ? runIds.map((id) => core.isKnown(id)) : []));
  setHandler(explainQuery, (runIds) => runIds.map((id) => core.explain(id, Date.now())));
  setHandler(tenantQuery, (tenant) => core.tenantStatus(tenant, Date.now()) ?? null);
  setHandler(tenantsQuery, (tenants) =>
    Array.isArray(tenants) ? tenants.map((t) => core.tenantStatus(t, Date.now()) ?? null) : [],
  );
  setHandler(batchCheckQuery, (q) =>
    core.checkBatch(String(q?.tenant), Number(q?.items), Number(q?.costPerItem), Date.now()),
  );
  setHandler(ledgerQuery, (tenant, limit) => core.ledgerEntries(tenant, limit));

  const track = (p: Promise<void>): void => {
    pending++;
    p.catch((err: unknown) => log.error('scheduler activity failed', { err: String(err) })).finally(() => {
      pending--;
      dirty = true;
    });
  };
  const dispatch = (admissions: Admission[]): void => {
    for (let i = 0; i < admissions.length; i += NOTICE_BATCH) {
      const notices = admissions.slice(i, i + NOTICE_BATCH).map((a) => ({
        runId: a.runId,
        notice: {
          attempt: a.attempt,
          seq: a.seq,
          admittedAt: a.admittedAt,
          leaseExpiresAt: a.leaseExpiresAt,
          reserved: a.reserved,
        },
      }));
      track(
        notifyAdmissions(notices).then((unreachable) => {
          if (unreachable.length > 0) applyReport(core, { unreachable }, Date.now());
        }),
      );
    }
  };
  const shouldContinueAsNew = (): boolean =>
    workflowInfo().continueAsNewSuggested ||
    (input.maxHistoryEvents !== undefined && workflowInfo().historyLength >= input.maxHistoryEvents);

  // One timer per wake-up time, never cancelled: a `condition` with a timeout would start and cancel
  // a timer on every loop (two history events each time), and history is the scheduler's budget.
  let timerAt: number | null = null;
  const armTimer = (wake: number | null): void => {
    if (wake === null || (timerAt !== null && timerAt <= wake)) return;
    const at = (timerAt = wake);
    void sleep(Math.max(1, wake - Date.now())).then(() => {
      if (timerAt === at) timerAt = null;
      dirty = true;
    });
  };

  let lastDetails = '';
  while (!shouldContinueAsNew()) {
    if (!dirty) {
      armTimer(core.nextWakeAt(Date.now()));
      await condition(() => dirty || shouldContinueAsNew());
    }
    dirty = false;
    const now = Date.now();
    // One floor at a time: one asked for meanwhile follows when it lands. A tenant without a budget
    // period is floored at all its runs' usage.
    if (recoverRequested && !floorInFlight) {
      recoverRequested = false;
      const windows = core.recoveryWindows(now);
      floorInFlight = true;
      let landedQuiet = false;
      track(
        recoverUsage(windows)
          .then((r) => {
            const { usage, activeRuns } = recoveryFigures(r);
            landedQuiet = activeRuns === 0;
            core.floorSpent(usage, Date.now(), now, landedQuiet);
          })
          .catch((err: unknown) => {
            recoverRequested = true; // a held tenant must not wait for the next follow-up
            throw err;
          })
          .finally(() => {
            floorInFlight = false;
            if (floorDue() || (landedQuiet && core.needsFloor())) recoverRequested = true;
          }),
      );
    }
    const expired = core.expireLeases(now);
    // Revocations go out in batches like admissions: one activity per NOTICE_BATCH runs.
    for (let i = 0; i < expired.length; i += NOTICE_BATCH) {
      const part = expired.slice(i, i + NOTICE_BATCH);
      track(notifyRevoked(part.map((a) => ({ runId: a.runId, attempt: a.attempt }))));
    }
    // Queued units their tenant's budget can no longer cover end now (budget_exhausted), not when
    // the period rolls: their runs are told, in batches.
    const refused = core.refuseUncoverable(now);
    for (let i = 0; i < refused.length; i += NOTICE_BATCH)
      track(notifyBudgetRefused(refused.slice(i, i + NOTICE_BATCH)));
    const admissions = core.admit(now);
    if (admissions.length > 0) dispatch(admissions);
    const details = summaryLine(core.summary(now));
    if (details !== lastDetails) setCurrentDetails((lastDetails = details));
  }

  // Let in-flight notices and handlers finish so nothing is lost between runs of the chain, for at
  // most a minute: a notice that cannot be delivered (no worker) must not hold the chain. An
  // admission it abandons is not lost: its lease expires, and the run re-offers itself.
  await condition(() => pending === 0 && allHandlersFinished(), '1 minute');
  // Long-idle tenants leave the core (the API re-sends a tenant it no longer knows): the input stays bounded.
  core.evictIdle(Date.now());
  await continueAsNew<typeof schedulerWorkflow>({
    ...input,
    snapshot: core.snapshot(),
    continuedAsNew: continuedAsNew + 1,
  });
}

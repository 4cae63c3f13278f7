import { log, patched, setHandler } from '@temporalio/workflow';
import {
  batchCheckQuery,
  drainSignal,
  drainUpdate,
  explainQuery,
  knowsQuery,
  ledgerQuery,
  patchSettingsUpdate,
  recoverSignal,
  reportSignal,
  reportUpdate,
  resumeSignal,
  resumeUpdate,
  statusQuery,
  submitUpdate,
  tenantQuery,
  tenantsQuery,
  topUpUpdate,
  topUpsUpdate,
  upsertTenantsUpdate,
} from '../contract/scheduler-messages';
import { PATCH } from './patches';
import type { SchedulerManager } from './scheduler-manager';
import {
  submitEach,
  validateDrain,
  validateSettingsPatch,
  validateSubmissions,
  validateTopUp,
  validateTopUps,
  validateUpsertTenants,
} from './scheduler-validators';

/** Updates: each changes the core and marks the loop dirty; malformed messages are refused by validators. */
export function setUpdateHandlers(m: SchedulerManager): void {
  const { core, work } = m;
  // Malformed units are refused one by one (their neighbours in the message are not affected).
  // A unit whose run is not started yet (`admitNow`) is admitted in the answer when it can be, and
  // otherwise keeps its place in the queue.
  setHandler(
    submitUpdate,
    (units) =>
      work.touched(
        submitEach(units, (good) => {
          const keepQueued = good.some((u) => u.admitNow === true) && patched(PATCH.admitNowKeepsQueued.id);
          const { results, others } = core.submitAdmittingNow(good, Date.now(), {
            round: !m.closing,
            keepQueued,
          });
          work.admitted.push(...others);
          return results;
        }),
      ),
    {
      validator: validateSubmissions,
    },
  );
  setHandler(topUpUpdate, (req) => work.touched(core.topUp(req.runId, req.attempt, req.tokens, Date.now())), {
    validator: validateTopUp,
  });
  setHandler(
    topUpsUpdate,
    (reqs) => work.touched(reqs.map((r) => core.topUp(r.runId, r.attempt, r.tokens, Date.now()))),
    { validator: validateTopUps },
  );
  setHandler(
    upsertTenantsUpdate,
    (list) => {
      for (const t of list) {
        if (!core.upsertTenant(t.tenant, t.settings, Date.now()))
          log.warn('scheduler holds its maximum of busy tenants; tenant not added yet', { tenant: t.tenant });
      }
      m.recovery.onTenants();
      work.touch();
    },
    { validator: validateUpsertTenants },
  );
  // Operator updates answer the status after the change.
  const answering =
    <A extends unknown[]>(change: (...args: A) => void) =>
    (...args: A) => {
      change(...args);
      return work.touched(m.status());
    };
  setHandler(
    patchSettingsUpdate,
    answering((patch) => core.patchSettings(patch)),
    { validator: validateSettingsPatch },
  );
  setHandler(
    drainUpdate,
    answering((arg) => core.drain(arg?.intake ?? 'refuse', Date.now())),
    { validator: validateDrain },
  );
  setHandler(
    resumeUpdate,
    answering(() => core.resume(Date.now())),
    { validator: () => undefined },
  );
}

/**
 * Signals never throw: a malformed message is logged and dropped, never fails the scheduler. Reports
 * come as updates (the mailbox's way) or as signals (from a stopping worker, whose updates no longer
 * find a workflow worker of its own): the same report may arrive both ways, or twice, and is applied
 * once in this run. `drain` and `resume` are the operator's, from the Temporal CLI.
 */
export function setSignalHandlers(m: SchedulerManager): void {
  const { core, work } = m;
  setHandler(reportSignal, m.onReport);
  setHandler(reportUpdate, m.onReport);
  setHandler(drainSignal, (arg) => {
    const intake = (arg as { intake?: unknown } | null | undefined)?.intake === 'hold' ? 'hold' : 'refuse';
    core.drain(intake, Date.now());
    work.touch();
  });
  setHandler(resumeSignal, () => {
    core.resume(Date.now());
    work.touch();
  });
  setHandler(recoverSignal, (arg) =>
    m.recovery.onSignal((arg as { followUp?: unknown } | null | undefined)?.followUp === true),
  );
}

/** Queries: read-only, safe on any input. */
export function setQueryHandlers(m: SchedulerManager): void {
  const { core } = m;
  setHandler(statusQuery, () => m.status());
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
}

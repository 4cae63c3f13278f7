import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reofferSignal } from '../../src/contract/run-messages';
import { defaultTenantSettings } from '../../src/scheduler/tenants';
import { apiStoreLocation, openStore } from '../../src/stores/open';
import { startBareRun, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/** When each of a run's `offerRun` checks was scheduled (ms since epoch), from its history. */
async function checksOf(s: TestStack, runId: string): Promise<number[]> {
  const history = await s.client.workflow.getHandle(runId).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'offerRun')
    .map((e) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6));
}

/**
 * A queued run's check that the scheduler refused or did not answer is tried again after its
 * Retry-After, not at the standing interval (RUN_REOFFER_FIRST_SECONDS, a safety net of minutes): a
 * run the watchdog nudges towards a chain that is still starting up, or that does not know its tenant
 * yet, comes back into line within seconds of the chain being ready.
 */
describe('queued runs check on the scheduler (real dev server, default re-offer interval)', () => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack();
    expect(s.config.runs.reofferFirstSeconds).toBeGreaterThanOrEqual(300);
  });
  afterAll(async () => s?.close());

  it('a nudged check refused for an unknown tenant is retried after its Retry-After: the run completes once the tenant exists', async () => {
    const tenant = `late-${s.id}`;
    const runId = `run-${tenant}-${'0'.repeat(16)}cafe`; // the API's id form: the scheduler refuses others
    // Started without a submit (a submitter that died), for a tenant nobody has created yet.
    expect(await startBareRun(s, runId, tenant)).toBe('started');
    await s.client.workflow.getHandle(runId).signal(reofferSignal);
    // The nudged check ran and met unknown_tenant (no tenant in the store either).
    const first = await waitFor(
      () => checksOf(s, runId),
      (t) => t.length >= 1,
      60_000,
      500,
    );
    expect(first.length).toBeGreaterThanOrEqual(1);
    expect((await s.client.workflow.getHandle(runId).describe()).status.name).toBe('RUNNING');

    // The tenant appears in the API's store, as it does for a chain that does not know it yet: the
    // run's next check finds it (the check re-sends a tenant the store holds). The API's own create
    // refuses an id that already has runs (a deleted tenant's), so the test writes the store itself.
    const db = await openStore(apiStoreLocation(s.config));
    try {
      expect(await db.tenants.create(tenant, defaultTenantSettings(), 'no-key', Date.now())).toBe(true);
    } finally {
      await db.close();
    }
    const done = await waitFor(
      () => s.call('GET', `/v1/runs/${runId}`),
      (r) => r.body?.status === 'completed',
      240_000,
      500,
    );
    expect(done.body.status).toBe('completed');
    // Measured on the server's clock: the check after the refusal came at its Retry-After (5 s for
    // an unknown tenant, doubling while refused), far inside the standing interval.
    const checks = await checksOf(s, runId);
    expect(checks.length).toBeGreaterThanOrEqual(2);
    const gaps = checks.slice(1).map((t, i) => t - checks[i]!);
    expect(Math.max(...gaps)).toBeLessThan((s.config.runs.reofferFirstSeconds * 1000) / 2);
  });
});

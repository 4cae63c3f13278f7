import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimCheckKeys } from '../../src/fleet/claim-check';
import { prunePayloads } from '../../src/fleet/payload-retention';
import { openPayloadStore, payloadStoreLocation } from '../../src/stores/open';
import type { PayloadStore } from '../../src/stores/payloads/payload-store';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const DAY = 86_400_000;

/**
 * The payload store does not only grow (issue 44, item 7): a run's claim-checked payloads (its
 * 2,000-character incident, in its input and its result) are deleted once unused for
 * PAYLOAD_RETENTION_DAYS, by the sweep the API runs, while the payloads the scheduler's current
 * history references are kept however old they are. Real dev server, the stack's own store.
 */
describe('payload retention (real dev server)', () => {
  let s: TestStack;
  let store: PayloadStore;
  beforeAll(async () => {
    // A short scheduler history: it continues as new with a snapshot of its tenants over 1 KiB,
    // which is claim-checked.
    s = await startTestStack({
      PAYLOAD_CLAIM_CHECK_BYTES: '1024',
      PAYLOAD_RETENTION_DAYS: '30',
      SCHEDULER_MAX_HISTORY_EVENTS: '60',
    });
    store = await openPayloadStore(payloadStoreLocation(s.config));
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await s?.close();
  });

  it("deletes a finished run's payloads past the retention and keeps the scheduler's", async () => {
    const key = await s.tenant(`retention-${s.id}`);
    for (let i = 0; i < 20; i++) await s.tenant(`retention-${s.id}-tenant-with-a-long-name-${i}`);
    const incident = `disk full on db-3 ${'x'.repeat(1900)}`;
    const submitted = await s.call('POST', '/v1/runs', {
      token: key,
      body: { agent: 'triage', input: { incident } },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const runId = submitted.body.runId as string;
    const status = (want: string[]) =>
      waitFor(
        () => s.call('GET', `/v1/runs/${runId}`, { token: key }),
        (r) => want.includes(r.body?.status),
        120_000,
        300,
      ).then((r) => r.body as { status: string; result?: { incident?: string } });
    expect((await status(['awaiting_approval', 'failed'])).status).toBe('awaiting_approval');
    expect((await s.call('POST', `/v1/runs/${runId}/reject`, { token: key })).status).toBe(200);
    const done = await status(['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.result?.incident).toBe(incident);

    const runKeys = claimCheckKeys(await s.client.workflow.getHandle(runId).fetchHistory());
    expect(runKeys.size).toBeGreaterThan(0);
    for (const k of runKeys) expect(await store.get(k)).not.toBeNull();
    // The scheduler's current run began from a claim-checked snapshot.
    const schedulerKeys = await waitFor(
      async () =>
        claimCheckKeys(await s.client.workflow.getHandle(s.config.schedulerWorkflowId).fetchHistory()),
      (keys) => keys.size > 0,
      60_000,
      500,
    );
    expect(schedulerKeys.size).toBeGreaterThan(0);

    // Within the retention nothing of this run goes.
    const common = {
      store,
      client: s.client,
      schedulerWorkflowId: s.config.schedulerWorkflowId,
      retentionMs: 30 * DAY,
    };
    await prunePayloads({ ...common, now: Date.now() + 29 * DAY });
    for (const k of runKeys) expect(await store.get(k, Date.now())).not.toBeNull();
    // Past it, the run's payloads go (the reads above marked them used now); the scheduler's stay.
    const later = Date.now() + 31 * DAY;
    expect(await prunePayloads({ ...common, now: later })).toBeGreaterThanOrEqual(
      [...runKeys].filter((k) => !schedulerKeys.has(k)).length,
    );
    for (const k of runKeys) if (!schedulerKeys.has(k)) expect(await store.get(k, later)).toBeNull();
    const current = claimCheckKeys(
      await s.client.workflow.getHandle(s.config.schedulerWorkflowId).fetchHistory(),
    );
    expect(current.size).toBeGreaterThan(0);
    for (const k of current) expect(await store.get(k, later), `scheduler payload ${k}`).not.toBeNull();
  }, 240_000);
});

import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { capturedLog, startSyntheticWorkers } from '../../bench/lib/extra-workers';
import { workflowSource } from '../../src/fleet/worker';
import { expectEffectsOnce, startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

/** Workers in all: the stack's own and the extra ones, each with its own mailbox, in this process. */
const WORKERS = 24;
const RUNS = Number(process.env.REPORTS_PULL_RUNS ?? 240);
const FAST = { MODEL_TPM: '1000000000', MODEL_RPM: '100000000' };

/**
 * Worker reports by pull (REPORTS=pull): 24 workers report to one scheduler on the dev server with
 * its default `history.maxInFlightUpdates` (10). No worker sends a report update, none is refused,
 * every run completes, each effect lands once at the sink, and the ledger is the provider's bill,
 * across the scheduler's continue-as-new (its cursor travels with it).
 */
describe('24 workers report to one scheduler by pull (real dev server, default update limits)', () => {
  let s: TestStack;
  let extra: { close(): Promise<void> } | undefined;
  const warnings: string[] = [];

  beforeAll(async () => {
    // A short history: the chain continues as new many times, its report cursor with it.
    s = await startTestStack(
      { REPORTS: 'pull', FLEET_CONCURRENCY: '96', ...FAST },
      { scheduler: { maxHistoryEvents: 100 } },
    );
    extra = await startSyntheticWorkers({
      count: WORKERS - 1,
      address: inject('temporalAddress'),
      config: s.config,
      client: s.client,
      modelBaseUrl: s.modelBaseUrl,
      log: capturedLog(warnings),
      workflows: workflowSource(inject('workflowBundlePath')),
    });
  }, 300_000);

  afterAll(async () => {
    await extra?.close();
    await s?.close();
  }, 120_000);

  it(`${RUNS} runs complete; no report update is sent or refused; the ledger is the bill`, async () => {
    const tenant = `pull-${s.id}`;
    const key = await s.tenant(tenant, { maxInFlight: 96, budget: { tokens: 100_000_000, period: 'day' } });
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i += 20) {
      const replies = await Promise.all(
        Array.from({ length: Math.min(20, RUNS - i) }, () =>
          s.call('POST', '/v1/runs', {
            token: key,
            body: { agent: 'synthetic', input: { steps: 2, tokensPerStep: 100, stepMs: 200, effect: true } },
          }),
        ),
      );
      for (const r of replies) {
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        ids.push(r.body.runId as string);
      }
    }
    const statuses = await waitFor(
      () =>
        Promise.all(
          ids.map((id) => s.call('GET', `/v1/runs/${id}`, { token: key }).then((r) => r.body?.status)),
        ),
      (v) => v.every((st) => st === 'completed' || st === 'failed' || st === 'cancelled'),
      600_000,
      1000,
    );
    expect(statuses.filter((st) => st === 'completed').length).toBe(RUNS);

    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (v) => v.body.inFlight === 0 && v.body.ledger.reserved === 0,
      60_000,
    );
    const bill = (await fetch(`${s.simUrl}/admin/bill`).then((r) => r.json())) as {
      tenants: Record<string, number>;
    };
    expect(bill.tenants[tenant]).toBe(RUNS * 200);
    expect(me.body.ledger.spent).toBe(bill.tenants[tenant]);
    await expectEffectsOnce(s, RUNS);
    const status = (await s.call('GET', '/v1/admin/scheduler')).body;
    expect(status.history.continuedAsNew).toBeGreaterThanOrEqual(3);

    // None as an update, so none refused: the scheduler's history holds no workerReport update.
    const history = await s.client.workflow.getHandle(s.config.schedulerWorkflowId).fetchHistory();
    const reportUpdates = (history.events ?? []).filter(
      (e) =>
        e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'workerReport',
    );
    expect(reportUpdates.length).toBe(0);
    const refused = warnings.filter((w) => /report failed|ResourceExhausted|in-flight/i.test(w));
    expect(refused, refused.slice(0, 3).join('\n')).toEqual([]);
    // The reports came through the log, from most of the workers' mailboxes.
    const db = new Database(path.join(s.config.dataDir, 'call-intents.db'), { readonly: true });
    const mailboxes = db
      .prepare('SELECT DISTINCT substr(report_id, 1, 15) AS m FROM scheduler_reports WHERE scheduler_id = ?')
      .all(s.config.schedulerWorkflowId) as { m: string }[];
    db.close();
    expect(mailboxes.length).toBeGreaterThanOrEqual(WORKERS / 2);
  }, 900_000);
});

import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBundleWorker } from '../support/bundle-worker';
import type { lostStepTaskProbe } from '../support/lost-step-task-workflow';
import { startTestStack, waitFor } from '../support/stack';
import type { TestStack } from '../support/stack';

const EventType = temporal.api.enums.v1.EventType;

/**
 * A short model step runs as a local activity: when the workflow task that ran it does not complete
 * (the server failed to persist it: "Update workflow execution operation failed ... context
 * canceled"), the retried task runs the step again. That re-run must not call the provider a second
 * time for the same call key: the provider bills one call, and the ledger charges it once.
 */
describe('a short step whose workflow task was lost after it ran (real dev server)', () => {
  let s: TestStack;
  let probe: { close(): Promise<void> } | undefined;
  let taskQueue: string;

  beforeAll(async () => {
    s = await startTestStack();
    taskQueue = `${s.config.temporal.taskQueue}-lost-step`;
    probe = await startBundleWorker(
      s,
      path.join(__dirname, '..', 'support', 'lost-step-task-workflow.ts'),
      taskQueue,
    );
  }, 120_000);
  afterAll(async () => {
    await probe?.close();
    await s?.close();
  });

  it('is called once, billed once and charged once', async () => {
    const tenant = `lost-${s.id}`;
    const key = await s.tenant(tenant);
    const runId = `run-${tenant}-00000000000000000001`;
    const out = await s.client.workflow.execute<typeof lostStepTaskProbe>('lostStepTaskProbe', {
      taskQueue,
      workflowId: runId,
      args: [{ runId, tenant, tokens: 100 }],
      workflowExecutionTimeout: '1 minute',
    });
    const history = await s.client.workflow.getHandle(runId).fetchHistory();
    const types = (history.events ?? []).map((e) => e.eventType);
    // The path: the first task failed after the step ran, and the step's one marker is the retry's.
    expect(types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toHaveLength(1);
    expect(types.filter((t) => t === EventType.EVENT_TYPE_MARKER_RECORDED)).toHaveLength(2);
    const bill = (await (await fetch(`${s.simUrl!}/admin/bill`)).json()) as {
      tenants: Record<string, number>;
    };
    expect(bill.tenants[tenant], 'the provider billed the step once').toBe(out.usedTokens);
    const me = await waitFor(
      () => s.call('GET', '/v1/tenants/me', { token: key }),
      (r) => r.body?.ledger?.spent === out.usedTokens,
      30_000,
    );
    expect(me.body.ledger.spent).toBe(bill.tenants[tenant]);
  });
});

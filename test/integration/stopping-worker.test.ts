import { randomUUID } from 'node:crypto';
import { CancelledFailure } from '@temporalio/common';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createActivities } from '../../src/activities';
import type { ActivityDeps } from '../../src/activities';

/**
 * A stopping worker no longer polls for workflow tasks, so a scheduler update one of its activities
 * waits on can never complete from it. CI once hung 80 minutes on exactly that after the fuzz passes
 * (the worker stuck in DRAINING). Here the "scheduler" is a real workflow on a task queue that nobody
 * polls: each activity that waits on it must end when it is cancelled (as the grace's end does).
 */
describe('activities waiting on the scheduler end when cancelled (real dev server)', () => {
  let connection: Connection;
  let client: Client;
  let activities: ReturnType<typeof createActivities>;
  const schedulerId = `unpolled-scheduler-${randomUUID().slice(0, 8)}`;
  /** Called when the next update or query to the scheduler goes out. */
  const requestSent: (() => void)[] = [];

  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection });
    // Every update or query an activity sends to the scheduler is seen here as it goes out.
    const getHandle = client.workflow.getHandle.bind(client.workflow);
    client.workflow.getHandle = ((...args: Parameters<typeof getHandle>) => {
      const handle = getHandle(...args);
      const executeUpdate = handle.executeUpdate.bind(handle);
      const query = handle.query.bind(handle);
      const seen = () => {
        for (const sent of requestSent.splice(0)) sent();
      };
      return Object.assign(handle, {
        executeUpdate: ((...a: Parameters<typeof executeUpdate>) => (
          seen(),
          executeUpdate(...a)
        )) as typeof executeUpdate,
        query: ((...a: Parameters<typeof query>) => (seen(), query(...a))) as typeof query,
      });
    }) as typeof getHandle;
    await client.workflow.start('schedulerWorkflow', {
      workflowId: schedulerId,
      taskQueue: `nobody-polls-${schedulerId}`,
      args: [],
    });
    const unused = (what: string) => () => Promise.reject(new Error(`${what} is not part of this test`));
    const deps: ActivityDeps = {
      client,
      startRun: async () => 'started',
      discardRun: unused('discardRun'),
      recoverUsage: unused('recoverUsage'),
      schedulerId,
      mailbox: undefined as unknown as ActivityDeps['mailbox'],
      model: undefined as unknown as ActivityDeps['model'],
      effects: undefined as unknown as ActivityDeps['effects'],
      log: pino({ level: 'silent' }),
    };
    activities = createActivities(deps);
  });
  afterAll(async () => {
    await client?.workflow
      .getHandle(schedulerId)
      .terminate('test over')
      .catch(() => undefined);
    await connection?.close();
  });

  /**
   * Runs the activity, cancels it once its update or query to the scheduler is on the server, and
   * returns how it ended.
   */
  async function cancelWhileWaiting(
    run: (env: MockActivityEnvironment) => Promise<unknown>,
  ): Promise<unknown> {
    const env = new MockActivityEnvironment();
    let settled = false;
    const sent = new Promise<void>((r) => requestSent.push(r));
    const outcome = run(env).then(
      (value) => ({ value }),
      (err: unknown) => ({ err }),
    );
    void outcome.then(() => (settled = true));
    await Promise.race([sent, outcome]);
    // The request went out; a server round trip later (a refusal would be back by then) the
    // scheduler's workflow task is still not taken, and the activity still waits: nothing can
    // answer an update or a query on a workflow no worker runs.
    const d = await client.workflow.getHandle(schedulerId).describe();
    expect(d.raw.pendingWorkflowTask?.startedTime ?? null).toBeNull();
    expect(settled).toBe(false);
    env.cancel();
    return outcome;
  }

  const unit = {
    runId: `run-${randomUUID()}`,
    tenant: 't',
    priority: 'standard' as const,
    cost: 10,
    attempt: 0,
  };

  it('requestTopUp', async () => {
    const r = await cancelWhileWaiting((env) =>
      env.run(activities.requestTopUp, { runId: unit.runId, attempt: 0, tokens: 10 }),
    );
    expect(r).toHaveProperty('err');
  });

  it('resubmit', async () => {
    const r = await cancelWhileWaiting((env) => env.run(activities.resubmit, unit));
    expect(r).toHaveProperty('err');
  });

  it('offerRun (a check shared with other runs)', async () => {
    const r = (await cancelWhileWaiting((env) => env.run(activities.offerRun, unit))) as { err?: unknown };
    expect(r.err).toBeInstanceOf(CancelledFailure);
  });

  it('startBatchChunk', async () => {
    const r = await cancelWhileWaiting((env) =>
      env.run(activities.startBatchChunk, {
        batchId: `b-${randomUUID().slice(0, 8)}`,
        tenant: 't',
        agent: 'synthetic',
        priority: 'batch' as const,
        items: [{ steps: 1, tokensPerStep: 10 }],
        indexes: [0],
        estimatedTokensPerItem: 10,
        createdAt: new Date().toISOString(),
      }),
    );
    expect(r).toHaveProperty('err');
  });
});

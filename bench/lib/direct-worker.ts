import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../../src/activities';
import { effectStoreLocation, openEffectStore } from '../../src/stores/open';
import { SchedulerMailbox } from '../../src/activities/mailbox';
import { CallCharges } from '../../src/activities/call-charges';
import { openSqliteCallIntents } from '../../src/stores/call-intents/call-intents-sqlite';
import { createModelClient } from '../../src/activities/model-client';
import { openDataConverter } from '../../src/fleet/claim-check';
import type { Config } from '../../src/config';
import type { Charge, Release, Renewal } from '../../src/scheduler/types';

/** The direct path's task queue: its runs never meet the scheduler. */
export const DIRECT_TASK_QUEUE = 'bench-direct';

/** What the direct path's own process (bench/lib/direct-process.ts) prints once its door and worker are up. */
export const DIRECT_READY = 'direct path ready';

/**
 * A mailbox that tells no scheduler anything: on the direct path a run's release, renewals and
 * cancellation have nobody to go to. Everything else about the activities is the production code.
 */
class NoSchedulerMailbox extends SchedulerMailbox {
  override release(_r: Release): Promise<void> {
    return Promise.resolve();
  }
  override cancel(_runId: string): Promise<void> {
    return Promise.resolve();
  }
  override renew(_r: Renewal): void {}
  override charge(_c: Charge): void {}
  override flush(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A second worker, on its own task queue, with the same workflow code, the same activities (built by
 * the activity factory with the real model client and effect store) and the same tuning as the fleet
 * worker; only the mailbox is a no-op. Runs started here and admitted at start measure what the
 * server does with no scheduler in the path.
 */
export async function startDirectWorker(opts: {
  config: Config;
  address: string;
  client: Client;
  modelBaseUrl: string;
  /** The bundled workflow code, or `{ codePath }` of a bundle written to a file. */
  workflowBundle: NonNullable<WorkerOptions['workflowBundle']>;
  log: Logger;
}): Promise<{ close(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const mailbox = new NoSchedulerMailbox(opts.client, 'no-scheduler', 3_600_000, () => [], opts.log);
  const effects = await openEffectStore(effectStoreLocation(opts.config));
  // No scheduler to charge on this path: the calls' intents live in this process's memory only, so
  // no fleet worker's sweep ever charges them to a scheduler that never saw these runs.
  const intents = openSqliteCallIntents(':memory:');
  const calls = new CallCharges(intents, mailbox, opts.config.charges, opts.log);
  // The fleet's claim-check store: the stack's client encodes large inputs into it.
  const converter = await openDataConverter(opts.config);
  const worker = await Worker.create({
    connection,
    namespace: opts.config.temporal.namespace,
    taskQueue: DIRECT_TASK_QUEUE,
    dataConverter: converter.dataConverter,
    workflowBundle: opts.workflowBundle,
    activities: createActivities({
      client: opts.client,
      startRun: () => Promise.reject(new Error('the direct path starts no runs from activities')),
      discardRun: () => Promise.reject(new Error('the direct path discards no runs from activities')),
      // No scheduler on this path, so none ever recovers.
      recoverUsage: () => Promise.resolve({ usage: [], activeRuns: 0, scanned: 0, truncated: false }),
      schedulerId: 'no-scheduler',
      mailbox,
      calls,
      model: createModelClient({
        baseUrl: opts.modelBaseUrl,
        apiKey: opts.config.model.apiKey,
        model: opts.config.model.name,
        maxPauseMs: opts.config.model.maxPauseMs,
        onObservation: () => {},
      }),
      effects,
      effectSinkUrl: opts.config.effectSinkUrl,
      log: opts.log,
    }),
    identity: `fairway-bench-direct/${process.pid}`,
    // The fleet worker's tuning (src/fleet/worker.ts), so the two paths differ only in the scheduler.
    maxConcurrentActivityTaskExecutions: 400,
    maxConcurrentLocalActivityExecutions: 400,
    maxConcurrentWorkflowTaskExecutions: 100,
    maxCachedWorkflows: 2000,
  });
  const done = worker.run();
  return {
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
      await mailbox.close();
      await calls.close();
      await intents.close();
      await effects.close();
      await converter.close();
      await connection.close();
    },
  };
}

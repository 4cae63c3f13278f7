import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { inject } from 'vitest';
import { startFleetWorker } from '../../src/fleet/worker';
import type { FleetWorker } from '../../src/fleet/worker';
import type { TestStack } from './stack';

const noop = () => undefined;
const silent = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/**
 * A fleet worker of the stack (its activities, ledger and mailbox) on `taskQueue`, running the
 * workflow code bundled from `workflowsPath` (a test-only entry); the caller closes it. `queues`
 * narrows what it serves (`startFleetWorker`'s `agents` and `base`).
 */
export async function startBundleWorker(
  s: TestStack,
  workflowsPath: string,
  taskQueue: string,
  queues: { agents?: readonly string[]; base?: boolean } = {},
): Promise<{ worker: FleetWorker; connection: NativeConnection; close(): Promise<void> }> {
  const code = await bundleWorkflowCode({ workflowsPath, logger: silent });
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await startFleetWorker({
    config: s.config,
    connection,
    client: s.client,
    modelBaseUrl: s.modelBaseUrl,
    log: s.log,
    workflows: { workflowBundle: code },
    taskQueue,
    ...queues,
  }).catch(async (err: unknown) => {
    await connection.close();
    throw err;
  });
  return {
    worker,
    connection,
    async close() {
      await worker.close();
      await connection.close();
    },
  };
}

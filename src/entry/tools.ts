import { NativeConnection } from '@temporalio/worker';
import { createLog } from '../infra/log';
import { loadConfig } from '../config';
import { installRuntime, sdkLevel } from '../infra/runtime';
import { waitFor } from '../infra/wait-for';
import { toolTaskQueue } from '../contract/tool-registry';
import { startToolWorker } from '../fleet/tool-worker';
import { closeOnSignal, failStart } from './shutdown';

/**
 * Starts a tool worker alone: it serves the tools named in WORKER_TOOLS, each on its own task queue,
 * with only their credentials (TOOL_<NAME>_CREDENTIAL), and no workflows, scheduler or model plane.
 * A deployment runs one per tool (docker-compose.yml); unlike a dev stack it refuses to make up a
 * credential, since the effect sink could not verify it.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLog(config.logLevel);
  installRuntime(sdkLevel(config.logLevel), log);
  const serves = config.tools.serve;
  if (serves.length === 0)
    throw new Error('WORKER_TOOLS is empty: name the tools this worker serves (e.g. WORKER_TOOLS=pager).');
  const missing = serves.filter((t) => config.tools.credentials[t] === undefined);
  if (missing.length > 0)
    throw new Error(
      `no credential for ${missing.map((t) => `"${t}" (TOOL_${t.toUpperCase()}_CREDENTIAL)`).join(', ')}.`,
    );
  const address = config.temporal.address;
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set: a tool worker joins a running Temporal.');
  const connection = await waitFor(
    `Temporal at ${address}`,
    () => NativeConnection.connect({ address }),
    log,
  );
  const tools = await startToolWorker({ config, connection, log });
  const taskQueues = tools.serves.map((t) => toolTaskQueue(config.temporal.taskQueue, t));
  log.info({ tools: tools.serves, taskQueues }, 'tool worker started');
  closeOnSignal(
    async () => {
      await tools.close();
      await connection.close();
    },
    { info: (m) => log.info(m), error: (m) => log.error(m) },
  );
}

main().catch(failStart);

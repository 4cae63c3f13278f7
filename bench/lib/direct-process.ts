import { Connection } from '@temporalio/client';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { openFleetClient } from '../../src/fleet/claim-check';
import { startDirectFrontDoor } from './direct-front-door';
import { DIRECT_READY, startDirectWorker } from './direct-worker';

/**
 * The direct path as a process of its own, as a fleet worker and an API are on the cluster: a direct
 * front door and a direct worker on the Temporal of `TEMPORAL_ADDRESS`, configured by the environment
 * the cluster's Fairway processes get, running the workflow bundle at `WORKFLOW_BUNDLE_PATH`
 * (`DIRECT_SEPARATE_SIGNAL=1`: start then signal), its door on `DIRECT_PORT`. Stops on SIGTERM.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const address = config.temporal.address;
  const bundlePath = config.workflowBundlePath;
  const modelBaseUrl = config.model.baseUrl;
  const port = Number(process.env.DIRECT_PORT);
  if (!address || !bundlePath || !modelBaseUrl || !(port > 0))
    throw new Error(
      'the direct process needs TEMPORAL_ADDRESS, WORKFLOW_BUNDLE_PATH, MODEL_BASE_URL and DIRECT_PORT',
    );
  const connection = await Connection.connect({ address });
  const fleet = await openFleetClient(connection, config);
  const door = await startDirectFrontDoor(fleet.client, {
    separateSignal: process.env.DIRECT_SEPARATE_SIGNAL === '1',
    port,
  });
  const worker = await startDirectWorker({
    config,
    address,
    client: fleet.client,
    modelBaseUrl,
    workflowBundle: { codePath: bundlePath },
    log: pino({ level: 'warn' }),
  });
  console.log(`${DIRECT_READY} at ${door.url}`);
  process.once('SIGTERM', () => {
    void (async () => {
      await door.close();
      await worker.close();
      await fleet.close();
      await connection.close();
      process.exit(0);
    })();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

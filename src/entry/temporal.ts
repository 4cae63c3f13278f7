import { loadConfig } from '../config';
import { startStack } from '../stack';
import { closeOnSignal, failStart } from './shutdown';

/** Starts the embedded Temporal dev server and its Web UI alone (for real deployments and drills that restart one part). */
async function main(): Promise<void> {
  const config = loadConfig();
  const stack = await startStack(config, { temporal: true, sim: false, worker: false, api: false });
  stack.log.info({ temporal: stack.temporalAddress, api: stack.apiUrl, ui: stack.uiUrl }, 'temporal started');
  if (stack.adminTokenGenerated && stack.adminToken) console.log(`Admin token: ${stack.adminToken}`);
  closeOnSignal(stack.close, { info: (m) => stack.log.info(m), error: (m) => stack.log.error(m) });
}

main().catch(failStart);

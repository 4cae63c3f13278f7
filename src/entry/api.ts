import { loadConfig } from '../config';
import { startStack } from '../stack';
import { closeOnSignal, failStart } from './shutdown';

/** Starts the HTTP API alone (for real deployments and drills that restart one part). */
async function main(): Promise<void> {
  const config = loadConfig();
  const stack = await startStack(config, { temporal: false, sim: false, worker: false, api: true });
  stack.log.info({ temporal: stack.temporalAddress, api: stack.apiUrl, ui: stack.uiUrl }, 'api started');
  if (stack.adminTokenGenerated && stack.adminToken) console.log(`Admin token: ${stack.adminToken}`);
  closeOnSignal(stack.close, { info: (m) => stack.log.info(m), error: (m) => stack.log.error(m) });
}

main().catch(failStart);

import { createLog } from '../infra/log';
import { loadConfig } from '../config';
import { startSimulator } from '../standins/modelplane';
import { closeOnSignal, failStart } from './shutdown';

/** Starts the model-plane simulator alone. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLog(config.logLevel);
  const sim = await startSimulator({ ...config.sim, host: config.host });
  log.info({ url: sim.url, tpm: config.sim.tpm, rpm: config.sim.rpm }, 'model-plane simulator started');
  closeOnSignal(sim.close, { info: (m) => log.info(m), error: (m) => log.error(m) });
}

main().catch(failStart);

import path from 'node:path';
import { createLog } from '../infra/log';
import { loadConfig } from '../config';
import { startEffectSink } from '../standins/effectsink/sink';
import { closeOnSignal, failStart } from './shutdown';

/** Starts the effect sink alone: it counts where effects land (deliveries per idempotency key). */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLog(config.logLevel);
  const sink = await startEffectSink({
    port: config.sinkPort,
    host: config.host,
    file: path.resolve(config.dataDir, 'effect-sink.jsonl'),
    // The identities it authenticates: a tool's effect must come with that tool's own credential.
    tools: Object.fromEntries(
      Object.entries(config.tools.credentials).filter((e): e is [string, string] => e[1] !== undefined),
    ),
    adminToken: config.sim.adminToken,
  });
  log.info({ url: sink.url }, 'effect sink started');
  closeOnSignal(sink.close, { info: (m) => log.info(m), error: (m) => log.error(m) });
}

main().catch(failStart);

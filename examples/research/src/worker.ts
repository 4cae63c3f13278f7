import path from 'node:path';
import { startWorker } from 'fairway';
import { publish } from './effects';
import { search } from './tools';

/**
 * Your worker: it bundles src/agents.ts into its workflow code and serves those agents' runs, the
 * `search` tool and the `publish` effect. It reads Fairway's environment (TEMPORAL_ADDRESS,
 * MODEL_BASE_URL, DATA_DIR, ...; see the README), and stops cleanly on Ctrl-C.
 */
async function main(): Promise<void> {
  const worker = await startWorker({
    agents: [path.join(__dirname, 'agents.ts')],
    tools: { search },
    effects: { publish },
  });
  console.log('research worker: serving research, summarize (tools: search; effects: publish)');
  const stop = () => {
    worker.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

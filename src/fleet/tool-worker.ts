import { randomBytes } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { effectStoreLocation, openEffectStore } from '../stores/open';
import type { Config } from '../config';
import { runWorker, shutdownOptions } from '../util/worker-shutdown';
import { createToolActivities } from '../activities/tool-activities';
import { openDataConverter } from './claim-check';
import { toolTaskQueue } from '../contract/tool-registry';
import type { ToolName } from '../contract/tool-registry';

export interface ToolWorker {
  /** The tools served, hence the only credentials this worker read. */
  serves: readonly ToolName[];
  /** Which tools' credentials this worker holds (names only). */
  holds(): ToolName[];
  close(): Promise<void>;
}

/**
 * Serves `tools` (default: the config's WORKER_TOOLS), each on its own task queue, holding only their
 * credentials: it copies those out of the config and no other. A tool with no configured credential
 * gets a random one for this process (a dev stack; the effect sink cannot verify it).
 */
export async function startToolWorker(opts: {
  config: Config;
  connection: NativeConnection;
  log: Logger;
  tools?: readonly ToolName[];
  taskQueue?: string;
}): Promise<ToolWorker> {
  const { config, log } = opts;
  const serves = [...new Set(opts.tools ?? config.tools.serve)];
  const credentials: Partial<Record<ToolName, string>> = {};
  for (const tool of serves) {
    const configured = config.tools.credentials[tool];
    if (configured === undefined)
      log.warn({ tool }, 'no credential configured for this tool: using a random one for this process');
    credentials[tool] = configured ?? `dev-${tool}-${randomBytes(18).toString('base64url')}`;
  }
  if (serves.length === 0) return { serves, holds: () => [], close: async () => undefined };
  const effects = await openEffectStore(effectStoreLocation(config));
  const converter = await openDataConverter(config).catch(async (err: unknown) => {
    await effects.close();
    throw err;
  });
  const base = opts.taskQueue ?? config.temporal.taskQueue;
  const workers = await Promise.all(
    serves.map((tool) =>
      Worker.create({
        connection: opts.connection,
        namespace: config.temporal.namespace,
        taskQueue: toolTaskQueue(base, tool),
        dataConverter: converter.dataConverter,
        // One tool's activity only: this queue's tasks can reach nothing else from here.
        activities: createToolActivities([tool], {
          credentials: { [tool]: credentials[tool] },
          effects,
          effectSinkUrl: config.effectSinkUrl,
        }),
        identity: `fairway-tool-${tool}@${config.buildId}/${process.pid}`,
        ...shutdownOptions(config.shutdownGraceSeconds, config.shutdownForceSeconds),
        maxConcurrentActivityTaskExecutions: 100,
      }),
    ),
  );
  const done = Promise.all(
    workers.map((w) => runWorker(w, (m) => log.warn({ taskQueue: w.options.taskQueue }, m))),
  ).finally(async () => {
    await effects.close();
    await converter.close();
  });
  return {
    serves,
    holds: () => Object.keys(credentials) as ToolName[],
    async close() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

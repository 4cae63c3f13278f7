import { randomBytes } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { effectStoreLocation, openEffectStore } from '../stores/open';
import type { Config } from '../config';
import { runWorker, shutdownOptions } from '../util/worker-shutdown';
import { createToolActivities, createUserToolActivity } from '../activities/tool-activities';
import { toolIdentitySalt } from './identity-salt';
import type { ToolHandler } from '../activities/tool-activities';
import { openDataConverter } from './claim-check';
import { isToolName, TOOL_NAME_PATTERN, toolTaskQueue } from '../contract/tool-registry';
import type { BuiltInToolName, ToolActivity, ToolName } from '../contract/tool-registry';

export interface ToolWorker {
  /** The tools served, hence the only credentials this worker read. */
  serves: readonly ToolName[];
  /** Which tools' credentials this worker holds (names only). */
  holds(): ToolName[];
  close(): Promise<void>;
}

/** A user's tool: its name, its own credential, and the function that does its work. */
export interface UserTool {
  name: ToolName;
  credential: string;
  handler: ToolHandler;
  /** The only agents it answers; default: any agent that declared it. */
  agents?: readonly string[];
}

/**
 * Serves `tools` (default: the config's WORKER_TOOLS) and the user's `userTools`, each on its own task
 * queue, holding only their credentials: it copies the built-ins' out of the config and no other. A
 * built-in tool with no configured credential gets a random one for this process (a dev stack; the
 * effect sink cannot verify it).
 */
export async function startToolWorker(opts: {
  config: Config;
  connection: NativeConnection;
  log: Logger;
  tools?: readonly BuiltInToolName[];
  userTools?: readonly UserTool[];
  taskQueue?: string;
}): Promise<ToolWorker> {
  const { config, log } = opts;
  const builtIns = [...new Set(opts.tools ?? config.tools.serve)];
  const users = opts.userTools ?? [];
  for (const t of users) {
    if (!TOOL_NAME_PATTERN.test(t.name))
      throw new TypeError(`Tool name "${t.name}" must match ${String(TOOL_NAME_PATTERN)}.`);
    if (isToolName(t.name)) throw new TypeError(`Tool "${t.name}" is a built-in tool's name.`);
    if (typeof t.handler !== 'function') throw new TypeError(`Tool "${t.name}" needs a handler function.`);
    if (!t.credential) throw new TypeError(`Tool "${t.name}" needs a credential.`);
  }
  const serves = [...builtIns, ...users.map((t) => t.name)];
  if (new Set(serves).size !== serves.length) throw new TypeError('A tool is served twice.');
  const credentials: Partial<Record<ToolName, string>> = {};
  for (const tool of builtIns) {
    const configured = config.tools.credentials[tool];
    if (configured === undefined)
      log.warn({ tool }, 'no credential configured for this tool: using a random one for this process');
    credentials[tool] = configured ?? `dev-${tool}-${randomBytes(18).toString('base64url')}`;
  }
  for (const t of users) credentials[t.name] = t.credential;
  if (serves.length === 0) return { serves, holds: () => [], close: async () => undefined };
  const identitySalt = toolIdentitySalt(config.tools.identitySalt, config.dataDir);
  const effects = await openEffectStore(effectStoreLocation(config));
  const converter = await openDataConverter(config).catch(async (err: unknown) => {
    await effects.close();
    throw err;
  });
  const base = opts.taskQueue ?? config.temporal.taskQueue;
  // One tool's activity per worker: its queue's tasks can reach nothing else from here.
  const activitiesOf = (tool: ToolName): Partial<Record<ToolName, ToolActivity>> => {
    const user = users.find((t) => t.name === tool);
    if (user) return createUserToolActivity({ ...user, identitySalt });
    return createToolActivities([tool as BuiltInToolName], {
      credentials: { [tool]: credentials[tool] },
      effects,
      effectSinkUrl: config.effectSinkUrl,
      identitySalt,
    });
  };
  const workers = await Promise.all(
    serves.map((tool) =>
      Worker.create({
        connection: opts.connection,
        namespace: config.temporal.namespace,
        taskQueue: toolTaskQueue(base, tool),
        dataConverter: converter.dataConverter,
        activities: activitiesOf(tool),
        identity: `fairway-tool-${tool}@${config.buildId}/${process.pid}`,
        ...shutdownOptions(config.shutdownGraceSeconds, config.shutdownForceSeconds),
        maxConcurrentActivityTaskExecutions: 100,
      }),
    ),
  ).catch(async (err: unknown) => {
    await effects.close();
    await converter.close();
    throw err;
  });
  const done = Promise.all(
    workers.map((w) => runWorker(w, (m) => log.warn({ taskQueue: w.options.taskQueue }, m))),
  ).finally(async () => {
    await effects.close();
    await converter.close();
  });
  return {
    serves,
    holds: () => Object.keys(credentials),
    async close() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}

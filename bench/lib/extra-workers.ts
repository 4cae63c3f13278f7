import { Writable } from 'node:stream';
import type { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import type { Logger } from 'pino';
import type { Config } from '../../src/config';
import { startFleetWorker } from '../../src/fleet/worker';
import type { WorkflowSource } from '../../src/fleet/worker';

/** A warn-level logger whose lines are pushed to `lines`: what the workers warned about, for a check. */
export function capturedLog(lines: string[]): Logger {
  return pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
}

/**
 * Starts `count` more fleet workers for the synthetic agent (its runs share the base queue, so each
 * serves the scheduler too), each on a connection of its own: the SDK takes one worker per task
 * queue and connection. `close` stops every worker, then every connection.
 */
export async function startSyntheticWorkers(opts: {
  count: number;
  address: string | undefined;
  config: Config;
  client: Client;
  modelBaseUrl: string;
  log: Logger;
  workflows: WorkflowSource;
}): Promise<{ close(): Promise<void> }> {
  const workers: { close(): Promise<void> }[] = [];
  const connections: NativeConnection[] = [];
  const close = async () => {
    for (const w of workers.splice(0)) await w.close();
    for (const c of connections.splice(0)) await c.close();
  };
  try {
    for (let i = 0; i < opts.count; i++) {
      const connection = await NativeConnection.connect(opts.address ? { address: opts.address } : {});
      connections.push(connection);
      workers.push(
        await startFleetWorker({
          config: opts.config,
          connection,
          client: opts.client,
          modelBaseUrl: opts.modelBaseUrl,
          log: opts.log,
          workflows: opts.workflows,
          agents: ['synthetic'],
          base: false,
        }),
      );
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { close };
}

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulator } from './app';
import type { SimulatorOptions, SimulatorState } from './state';

/** A listening simulator. */
export interface RunningSimulator {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:3001`. */
  url: string;
  port: number;
  state: SimulatorState;
  /** Stops listening and drops open keep-alive connections. */
  close(): Promise<void>;
}

/**
 * Starts the simulator on `port` (0 picks a free one), on loopback unless `host` names another
 * interface (`0.0.0.0`: every one, as a simulator in a container must); the URL names loopback then.
 * `adminToken` lets peers elsewhere use `/admin/*`.
 */
export async function startSimulator(
  opts: SimulatorOptions & { port: number; host?: string; adminToken?: string },
): Promise<RunningSimulator> {
  const { app, state } = createSimulator(opts);
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: opts.host ?? '127.0.0.1' }, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = urlHost(opts.host);
  return {
    url: `http://${host}:${port}`,
    port,
    state,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function urlHost(listenHost: string | undefined): string {
  if (listenHost === undefined || listenHost === '0.0.0.0' || listenHost === '::') return '127.0.0.1';
  return listenHost.includes(':') ? `[${listenHost}]` : listenHost;
}

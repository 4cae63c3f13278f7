import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import type { Express } from 'express';
import { listenWithLimits } from '../../../src/api/server';
import type { HttpLimits } from '../../../src/api/server';

/**
 * The app behind a real HTTP server with `limits`, for slow-client tests: `client()` opens a raw TCP
 * connection that collects whatever the server answers. The server is closed after `use`.
 */
export async function withLimitedServer(
  app: Express,
  limits: HttpLimits,
  use: (s: { port: number; client(): Promise<{ socket: Socket; answer(): string }> }) => Promise<void>,
): Promise<void> {
  const server: Server = await listenWithLimits(app, 0, '127.0.0.1', limits);
  const port = (server.address() as AddressInfo).port;
  const client = async () => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    await new Promise((r) => socket.once('connect', r));
    return { socket, answer: () => answer };
  };
  try {
    await use({ port, client });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

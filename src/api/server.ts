import { createServer, type Server } from 'node:http';
import type { RequestListener } from 'node:http';

/** Socket limits of the API's HTTP server (config: HTTP_*). */
export interface HttpLimits {
  /** A client must finish sending its headers within this many ms (slowloris). */
  headersTimeoutMs: number;
  /** ... and its whole request (headers and body) within this many ms (a trickled body). */
  requestTimeoutMs: number;
  /** Connections held at once; more are refused by the kernel-level accept. */
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 15_000,
  requestTimeoutMs: 60_000,
  maxConnections: 1000,
};

/** Listens on host:port with the socket limits applied; resolves once listening. */
export function listenWithLimits(
  app: RequestListener,
  port: number,
  host: string,
  limits: HttpLimits,
): Promise<Server> {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the two timeouts on this interval (default 30 s); check often enough to honour them.
      connectionsCheckingInterval: Math.max(250, Math.min(1000, limits.headersTimeoutMs / 4)),
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

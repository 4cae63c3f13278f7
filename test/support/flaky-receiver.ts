import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, as it saw it. */
export interface Received {
  id: string;
  timestamp: string;
  /** The webhook-signature header as sent. */
  signature: string;
  body: string;
  /** Whether `standardwebhooks`' verify accepted it under the endpoint's secret. */
  verified: boolean;
  /** What the receiver did: failed it (500), held it past the sender's timeout, or answered 200. */
  reply: 'fail' | 'hold' | 'ok';
  /** True when its id had been processed before (the receiver dedupes by webhook-id). */
  duplicate: boolean;
}

/**
 * A webhook receiver that misbehaves per event: the first request of each webhook-id answers 500, the
 * second is processed but answered only after `holdMs` (past the sender's timeout, so the sender
 * retries what was in fact received), every later one answers 200. It verifies every request with the
 * published `standardwebhooks` library and processes each id once.
 */
export class FlakyReceiver {
  readonly received: Received[] = [];
  readonly processed = new Map<string, unknown>();
  private server: Server | undefined;
  private readonly held = new Set<NodeJS.Timeout>();
  secret = '';

  constructor(
    readonly port: number,
    private readonly holdMs: number,
  ) {}

  /** A port nothing listens on yet (the receiver is down until `start`). */
  static async freePort(): Promise<number> {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const { port } = s.address() as AddressInfo;
    await new Promise<void>((r) => s.close(() => r()));
    return port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.body(req).then((body) => {
        const h = req.headers as Record<string, string>;
        const id = h['webhook-id'] ?? '';
        let verified = false;
        try {
          new Webhook(this.secret).verify(body, h);
          verified = true;
        } catch {
          verified = false;
        }
        const seen = this.received.filter((r) => r.id === id).length;
        const reply = seen === 0 ? 'fail' : seen === 1 ? 'hold' : 'ok';
        const duplicate = this.processed.has(id);
        this.received.push({
          id,
          timestamp: h['webhook-timestamp'] ?? '',
          signature: h['webhook-signature'] ?? '',
          body,
          verified,
          reply,
          duplicate,
        });
        if (reply === 'fail') {
          res.writeHead(500).end('try later');
          return;
        }
        if (verified && !duplicate) this.processed.set(id, JSON.parse(body));
        if (reply === 'ok') {
          res.writeHead(200).end(duplicate ? 'duplicate' : 'ok');
          return;
        }
        const t = setTimeout(() => {
          this.held.delete(t);
          res.writeHead(200).end('late');
        }, this.holdMs);
        this.held.add(t);
      });
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
  }

  async close(): Promise<void> {
    for (const t of this.held) clearTimeout(t);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server!.close(() => r()));
  }

  private body(req: IncomingMessage): Promise<string> {
    return new Promise((resolve) => {
      let s = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (s += c));
      req.on('end', () => resolve(s));
    });
  }
}

import { timingSafeEqual } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { operatorAllowed } from '../modelplane/operator-access';

/** What the sink saw, counted by the sink itself (the sender's own claims are not consulted). */
export interface SinkSummary {
  /** Every delivery received. */
  deliveries: number;
  /** Distinct idempotency keys among them. */
  distinctKeys: number;
  /** Keys delivered more than once (a broken key scheme or an unshared store shows up here). */
  duplicatedKeys: number;
  /** Up to 20 of those keys, for a first look. */
  duplicatedSample: string[];
}

/** Counts deliveries per key; optionally appends each to a JSON-lines file and reloads it on start. */
export class DeliveryLedger {
  private readonly counts = new Map<string, number>();
  private deliveries = 0;
  private duplicated = new Set<string>();
  private readonly lastFrom = new Map<string, string>();

  constructor(private readonly file?: string) {
    if (file && existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line) continue;
        try {
          this.count((JSON.parse(line) as { key: string }).key);
        } catch {
          /* a torn last line after a crash */
        }
      }
    }
    if (file) mkdirSync(path.dirname(file), { recursive: true });
  }

  private count(key: string): void {
    this.deliveries++;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (n > 1) this.duplicated.add(key);
  }

  record(key: string, from: string): void {
    if (this.file) appendFileSync(this.file, `${JSON.stringify({ key, from, at: Date.now() })}\n`);
    this.count(key);
    this.lastFrom.set(key, from);
  }

  /** Who delivered `key` last (`tool:<name>` for a tool identity), if it was delivered since the start. */
  deliveredBy(key: string): string | undefined {
    return this.lastFrom.get(key);
  }

  timesDelivered(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  summary(): SinkSummary {
    return {
      deliveries: this.deliveries,
      distinctKeys: this.counts.size,
      duplicatedKeys: this.duplicated.size,
      duplicatedSample: [...this.duplicated].slice(0, 20),
    };
  }
}

const MAX_BODY = 16 * 1024;
const KEY = /^[\x21-\x7e]{1,512}$/;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface RunningSink {
  url: string;
  ledger: DeliveryLedger;
  close(): Promise<void>;
}

/**
 * The effect sink: an HTTP service standing in for the outside world an effect reaches.
 * `POST /deliveries` with `{"key": "<idempotency key>"}` records one delivery (always, however
 * often the key came before: counting repeats is the point); `GET /summary` answers what it saw;
 * `GET /deliveries/<key>` whether a key was delivered (200 with the count, or 404).
 */
export async function startEffectSink(opts: {
  port: number;
  /** Interface to listen on; default loopback. */
  host?: string;
  file?: string;
  /** Lets peers other than loopback read `/summary` (`Authorization: Bearer <token>`). */
  adminToken?: string;
  /**
   * The tool identities the sink knows (tool name → credential). A delivery that names a tool
   * (`fairway-tool`) must present that tool's own credential (`authorization: Bearer`), else 401/403.
   */
  tools?: Record<string, string>;
}): Promise<RunningSink> {
  const tools = opts.tools ?? {};
  const listenHost = opts.host ?? '127.0.0.1';
  const ledger = new DeliveryLedger(opts.file);
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://sink');
      if (req.method === 'GET' && url.pathname === '/summary') {
        if (!operatorAllowed(req.socket.remoteAddress, req.headers.authorization, opts.adminToken))
          return send(res, 403, {
            error: { code: 'forbidden', message: 'the summary answers loopback peers, or SIM_ADMIN_TOKEN' },
          });
        return send(res, 200, ledger.summary());
      }
      if (req.method === 'GET' && url.pathname === '/healthz') return send(res, 200, { ok: true });
      // A sender that lost its own record of a delivery (it crashed after sending) asks before resending,
      // as it would ask any receiver that honours idempotency keys. Counting is unchanged: every POST counts.
      if (req.method === 'GET' && url.pathname.startsWith('/deliveries/')) {
        let key: string;
        try {
          key = decodeURIComponent(url.pathname.slice('/deliveries/'.length));
        } catch {
          return send(res, 400, { error: { code: 'invalid_request', message: 'malformed key' } });
        }
        const times = ledger.timesDelivered(key);
        return times > 0
          ? send(res, 200, { key, deliveries: times })
          : send(res, 404, { error: { code: 'not_found', message: `no delivery of ${key}` } });
      }
      if (req.method === 'POST' && url.pathname === '/deliveries') {
        const text = await readBody(req);
        if (text === undefined)
          return send(res, 413, { error: { code: 'too_large', message: 'body over 16 KiB' } });
        let key: unknown;
        try {
          key = (JSON.parse(text) as { key?: unknown }).key;
        } catch {
          return send(res, 400, { error: { code: 'invalid_json', message: 'body is not JSON' } });
        }
        if (typeof key !== 'string' || !KEY.test(key))
          return send(res, 400, {
            error: { code: 'invalid_key', message: 'key must be 1–512 printable ASCII characters' },
          });
        const who = identify(req, tools);
        if (!who.ok) return send(res, who.status, { error: { code: who.code, message: who.message } });
        ledger.record(key, who.tool ? `tool:${who.tool}` : (req.socket.remoteAddress ?? ''));
        return send(res, 200, { key, times: ledger.timesDelivered(key) });
      }
      return send(res, 404, { error: { code: 'not_found', message: `${req.method} ${url.pathname}` } });
    })().catch(() => send(res, 400, { error: { code: 'bad_request', message: 'unreadable request' } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: listenHost }, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = listenHost === '0.0.0.0' ? '127.0.0.1' : listenHost;
  return {
    url: `http://${host}:${port}`,
    ledger,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type Identified =
  { ok: true; tool: string | undefined } | { ok: false; status: 401 | 403; code: string; message: string };

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Who acts: no `fairway-tool` header is a plain run effect; a named tool must present its own credential.
 * A credential of another known tool is 403 (one tool acting with another's identity), anything else 401.
 */
function identify(req: IncomingMessage, tools: Record<string, string>): Identified {
  const tool = req.headers['fairway-tool'];
  if (tool === undefined) return { ok: true, tool: undefined };
  const name = Array.isArray(tool) ? '' : tool;
  const auth = req.headers.authorization ?? '';
  const presented = auth.startsWith('Bearer ') ? auth.slice(7) : '';
  const own = Object.hasOwn(tools, name) ? tools[name] : undefined;
  if (own !== undefined && presented && sameSecret(presented, own)) return { ok: true, tool: name };
  const other = Object.entries(tools).find(([t, c]) => t !== name && presented && sameSecret(presented, c));
  if (other)
    return {
      ok: false,
      status: 403,
      code: 'identity_mismatch',
      message: `the credential presented is not tool "${name}"'s`,
    };
  return {
    ok: false,
    status: 401,
    code: 'unauthenticated',
    message: own === undefined ? `unknown tool identity "${name}"` : `bad credential for tool "${name}"`,
  };
}

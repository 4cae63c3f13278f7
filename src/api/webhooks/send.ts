import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { MAX_ANSWER_CHARS } from '../../stores/webhooks/webhooks';
import { forbiddenLiteral, isForbiddenAddress, type WebhookTargets } from './targets';

/** What one POST brought back. */
export interface SendResult {
  /** The status answered; null when none came in time. */
  status: number | null;
  answer: string;
  error: string | null;
  retryAfter: string | undefined;
  durationMs: number;
}

/**
 * Resolves as usual, then refuses an address `public` forbids (the check is on what is connected to).
 * The error names the host, never the address: a tenant reads it in its delivery log.
 */
const publicOnly: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) return callback(new Error(`${hostname} resolves to a forbidden address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};

/**
 * POSTs `body` with `headers` to `url`: at most `timeoutMs` in all (connecting, sending, answering);
 * redirects are not followed (a 3xx is a failed attempt); the answer is kept up to MAX_ANSWER_CHARS.
 * Never throws: a failure to connect or a timeout is a result without status.
 */
export function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; targets: WebhookTargets },
): Promise<SendResult> {
  const started = Date.now();
  const u = new URL(url);
  // Node does not call `lookup` for an IP literal: under `public` it is refused here, unconnected.
  const literal = opts.targets === 'public' ? forbiddenLiteral(u) : undefined;
  if (literal !== undefined)
    return Promise.resolve({
      status: null,
      answer: '',
      error: `${literal} is a forbidden address`,
      retryAfter: undefined,
      durationMs: 0,
    });
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...r, durationMs: Date.now() - started });
    };
    const request = u.protocol === 'https:' ? https.request : http.request;
    const req = request(u, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'Fairway-Webhooks/1',
      },
      agent: false,
      ...(opts.targets === 'public' ? { lookup: publicOnly } : {}),
    });
    const timer = setTimeout(() => {
      finish({
        status: null,
        answer: '',
        error: `timed out after ${opts.timeoutMs} ms`,
        retryAfter: undefined,
      });
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err) =>
      finish({ status: null, answer: '', error: err.message || String(err), retryAfter: undefined }),
    );
    req.on('response', (res) => {
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (answer.length < MAX_ANSWER_CHARS) answer += chunk;
      });
      const status = res.statusCode ?? 0;
      const retryAfter = res.headers['retry-after'];
      res.on('end', () =>
        finish({ status, answer: answer.slice(0, MAX_ANSWER_CHARS), error: null, retryAfter }),
      );
      res.on('error', (err) => finish({ status, answer, error: err.message, retryAfter }));
    });
    req.end(body);
  });
}
